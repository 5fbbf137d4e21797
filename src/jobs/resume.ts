/**
 * Resuming a job: whether a finished trial's result can be kept, and whether a new run is the
 * same job (its identity: dataset, agent, predictions, attempts) as the folder holds.
 */
import type { Agent } from '../agents/agent.ts';
import { UsageError } from '../errors.ts';
import { taskChecksum } from '../tasks/checksum.ts';
import { patchSha256 } from '../trials/record.ts';
import type { TrialResult } from '../trials/result.ts';
import { VERSION } from '../version.ts';
import type { BerthJobState } from './job-files.ts';
import type { PlannedTrial } from './plan.ts';

/** Why an existing trial result cannot be kept, or undefined when it can. */
export function resumeMismatch(previous: TrialResult, trial: PlannedTrial, agent: Agent): string | undefined {
  if (previous?.berth?.instance_id !== trial.task.name) return 'different instance';
  if (previous.berth.attempt !== trial.attempt) return 'different attempt';
  if (previous.task_checksum !== taskChecksum(trial.task)) return 'the task changed';
  if (previous.berth.version !== VERSION) return `made by berth ${previous.berth.version}`;
  if (previous.agent_info?.name !== agent.info.name) return 'different agent';
  if (previous.berth.status === 'cancelled') return 'cancelled';
  if (previous.berth.status === 'error' && previous.verifier_result === null) return 'crashed';
  const planned = agent.plannedPatch?.(trial.task);
  if (planned !== undefined) {
    if (previous.berth.patch_sha256 !== patchSha256(planned)) return 'different patch';
  } else if (previous.agent_info.version !== agent.info.version) return 'different agent version';
  return undefined;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(',');
  return String(value);
}

/**
 * The differences between the identity of an existing job and a new run's, as
 * `label new vs old` phrases; empty when they match (or the old job recorded none).
 */
export function identityMismatch(
  previous: Record<string, unknown> | undefined,
  current: Record<string, unknown>,
): string[] {
  if (!previous || typeof previous !== 'object') return [];
  const out: string[] = [];
  for (const label of new Set([...Object.keys(current), ...Object.keys(previous)])) {
    const now = describeValue(current[label]);
    const before = describeValue(previous[label]);
    if (now !== before) out.push(`${label} ${now} vs ${before}`);
  }
  return out;
}

/**
 * Checks a new run against the job folder's recorded identity and filters. Re-running with
 * other filters is allowed only when every planned trial is already one of the job's (resuming
 * a part of it): the job then keeps its own filters and trial list.
 * @returns the filters and trial names to record in config.json.
 * @throws UsageError when the identity differs, or other filters pick trials the job lacks.
 */
export function checkResumeScope(
  previous: BerthJobState | undefined,
  run: {
    jobName: string;
    jobDir: string;
    identity: Record<string, unknown>;
    filters: Record<string, unknown> | undefined;
    trialNames: string[];
  },
): { filters: Record<string, unknown> | undefined; trialNames: string[] } {
  const refuse = (differences: string[]) =>
    new UsageError(
      `job ${run.jobName} exists with a different configuration: ${differences.join('; ')} ` +
        `(this run vs the job's); use another --job-name or remove the folder ${run.jobDir}`,
    );
  const differences = identityMismatch(previous?.identity, run.identity);
  if (differences.length > 0) throw refuse(differences);
  const filterDifferences =
    previous?.identity && run.filters ? identityMismatch(previous.filters ?? {}, run.filters) : [];
  if (filterDifferences.length === 0) return { filters: run.filters, trialNames: run.trialNames };
  const known = Array.isArray(previous?.trials) ? new Set(previous.trials) : new Set();
  const extra = run.trialNames.filter((name) => !known.has(name));
  if (extra.length > 0)
    throw refuse([...filterDifferences, `${extra.length} trial(s) not in the job, e.g. ${extra[0]}`]);
  return { filters: previous?.filters, trialNames: previous?.trials as string[] };
}
