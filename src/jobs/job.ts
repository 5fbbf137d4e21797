/**
 * Runs a job: the planned trials with bounded concurrency (p-queue), into
 * `jobs/<job>/` laid out as Harbor lays it out (config.json, result.json, one
 * folder per trial with its result.json). Every write is atomic. Re-running a
 * job name resumes: a finished trial is kept only when its instance, attempt,
 * the sha256 of the patch the agent will submit (when known in advance), the
 * agent and berth's version all match; the rest run again. Aborting the signal
 * (Ctrl-C) stops cleanly: pending trials are not started, running ones are
 * cancelled, finished ones are kept. The sha256 of every trial result.json berth
 * writes is kept in the job's own state file (`berth-state.json`, written
 * atomically); on resume a result whose bytes no longer match it (or that it does
 * not list) is not trusted: the trial runs again, with a notice.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import PQueue from 'p-queue';
import type { Agent } from '../agents/agent.ts';
import type { EnvironmentProvider } from '../environments/environment.ts';
import { InputError, UsageError } from '../errors.ts';
import type { ModelGateway, TrialLimits } from '../models/gateway.ts';
import { taskChecksum } from '../tasks/checksum.ts';
import {
  agentInfoForFile,
  roundSec,
  upgradeConfigFile,
  upgradeTrialResult,
  writeRewardFile,
} from '../trials/file-format.ts';
import type { TrialResult } from '../trials/result.ts';
import { initialTrialResult, patchSha256, runTrial } from '../trials/trial.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import type { Verifier } from '../verifiers/verifier.ts';
import { VERSION } from '../version.ts';
import { harborJobStats } from './harbor-stats.ts';
import type { PlannedTrial } from './plan.ts';

export interface JobOptions {
  jobsDir: string;
  jobName: string;
  /** Dataset name recorded as each trial's `source`. */
  source: string;
  plan: PlannedTrial[];
  agent: Agent;
  providers: readonly EnvironmentProvider[];
  verifiers: readonly Verifier[];
  /** Trials run at once (default 1). */
  concurrency?: number;
  timeoutMultiplier?: number;
  /** Per-phase timeout multipliers (agent, verifier), replacing `timeoutMultiplier` for their phase. */
  phaseMultipliers?: { agent?: number; verifier?: number };
  verifyEmptyPatch?: boolean;
  /** Recorded in config.json (the command line's options). */
  config?: Record<string, unknown>;
  /**
   * What defines the job's trials (dataset, agent, predictions file, attempts, filters), by
   * label. Recorded in config.json as `berth_identity`; re-running the job name with a different
   * identity is refused (resume is for the same configuration).
   */
  identity?: Record<string, unknown>;
  /**
   * The filters that pick the trials (include, exclude, limit), by label. Re-running the job
   * with other filters is allowed only when every planned trial is already one of the job's
   * (resuming a part of it); otherwise it is refused like an identity change.
   */
  filters?: Record<string, unknown>;
  signal?: AbortSignal;
  /** Called when a trial starts and when it ends (or is kept from a previous run). */
  onTrialStart?: (trial: PlannedTrial) => void;
  onTrialEnd?: (result: TrialResult, info: { reused: boolean; trial: PlannedTrial }) => void;
  /** Told why a previous result is not kept although it would match (e.g. it was changed). */
  onNotice?: (message: string) => void;
  /**
   * The job's model gateway and the trials' limits, when trials call models (each planned
   * trial names its model). Once the gateway's job budget is spent no further trial starts.
   */
  models?: { gateway: ModelGateway; limits?: TrialLimits };
}

/** The job's own record of what berth wrote: sha256 of each trial's result.json, by trial name. */
export const JOB_STATE_FILE = 'berth-state.json';

interface JobState {
  result_sha256: Record<string, string>;
  /**
   * True when the job folder has no state file: a job written by a berth from before the
   * state file existed. Its results are kept as they are (and recorded from then on).
   */
  legacy: boolean;
}

async function readJobState(jobDir: string): Promise<JobState> {
  let text: string;
  try {
    text = await readFile(join(jobDir, JOB_STATE_FILE), 'utf8');
  } catch (error) {
    return { result_sha256: {}, legacy: (error as NodeJS.ErrnoException).code === 'ENOENT' };
  }
  try {
    const state = JSON.parse(text) as Partial<JobState>;
    if (state && typeof state.result_sha256 === 'object' && state.result_sha256 !== null)
      return { result_sha256: { ...state.result_sha256 }, legacy: false };
  } catch {}
  return { result_sha256: {}, legacy: false };
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

export interface JobSummary {
  job_name: string;
  job_dir: string;
  started_at: string;
  finished_at: string;
  duration_sec: number;
  /** Trials planned. */
  total: number;
  resolved: number;
  /** True when the job was stopped before every trial finished. */
  cancelled: boolean;
  /** Results in plan order (trials never started are absent). */
  trials: TrialResult[];
  /** How many results were kept from a previous run of the same job. */
  reused: number;
  /** Tokens and cost of the trials' model calls (Harbor's JobStats fields), when the job called models. */
  model_usage?: ModelUsageTotals;
  /** Trials not started because the job's model budget was spent. */
  not_started_over_budget?: number;
}

/** Tokens and cost summed over a job's trials (their `agent_result`). */
export interface ModelUsageTotals {
  n_input_tokens: number;
  n_cache_tokens: number;
  n_output_tokens: number;
  /** USD over the trials whose cost is known; null when none is. */
  cost_usd: number | null;
  /** Trials that called models but whose cost is unknown (no price for the model). */
  n_trials_cost_unknown: number;
}

/** The model usage totals of trial results, or undefined when none called a model. */
export function modelUsageTotals(results: readonly TrialResult[]): ModelUsageTotals | undefined {
  const used = results.filter((r) => typeof r.agent_result?.n_input_tokens === 'number');
  if (used.length === 0) return undefined;
  const sum = (key: string) => used.reduce((total, r) => total + (Number(r.agent_result?.[key]) || 0), 0);
  const priced = used.filter((r) => typeof r.agent_result?.cost_usd === 'number');
  return {
    n_input_tokens: sum('n_input_tokens'),
    n_cache_tokens: sum('n_cache_tokens'),
    n_output_tokens: sum('n_output_tokens'),
    cost_usd:
      priced.length === 0
        ? null
        : Math.round(priced.reduce((t, r) => t + Number(r.agent_result?.cost_usd), 0) * 1e9) / 1e9,
    n_trials_cost_unknown: used.length - priced.length,
  };
}

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

/**
 * Reads a JSON state file of a job folder (config.json, a trial's result.json).
 * @returns the parsed object, or undefined when the file does not exist.
 * @throws InputError when it exists but cannot be read or is not a JSON object: a damaged
 *   job is refused, never taken for a fresh one (resuming would replace its results).
 */
export async function readJobJson(
  path: string,
  jobName: string,
): Promise<Record<string, unknown> | undefined> {
  return (await readJobFile(path, jobName))?.value;
}

/**
 * `readJobJson` with the sha256 of the file's bytes (to compare with what berth recorded).
 * @throws InputError as `readJobJson`.
 */
async function readJobFile(
  path: string,
  jobName: string,
): Promise<{ value: Record<string, unknown>; sha256: string } | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw damagedJob(path, jobName, (error as Error).message);
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw damagedJob(path, jobName, `not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw damagedJob(
      path,
      jobName,
      `not a JSON object (${Array.isArray(value) ? 'an array' : typeof value})`,
    );
  return { value: value as Record<string, unknown>, sha256: sha256(bytes) };
}

function damagedJob(path: string, jobName: string, why: string): InputError {
  return new InputError(
    { file: path },
    `${why}; job ${jobName} cannot be resumed from a damaged state file and nothing was changed: ` +
      'repair or remove that file (or the whole job folder), or use another --job-name',
  );
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

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The start time of a process (field 22 of `/proc/<pid>/stat`, clock ticks since boot),
 * or undefined where /proc is absent or the process is gone. With the pid it names one
 * process for good: a pid reused by another process has another start time.
 */
export async function processStartTime(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces or ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

/**
 * The process holding a job folder's lock, from the lock file's text (`pid start-time`): its pid
 * when that process is running and started at the recorded time (a lock written before the start
 * time was recorded holds only the pid: trusted), else undefined (a stale lock). The viewer uses
 * it to tell a running job from one a crash left behind.
 */
export async function lockHolder(text: string): Promise<number | undefined> {
  const [pidText = '', startText] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (pidText === '' || !pidAlive(pid)) return undefined;
  const start = startText === undefined ? undefined : await processStartTime(pid);
  return start === undefined || start === startText ? pid : undefined;
}

/**
 * Takes the job folder's lock (`.berth.lock`, created exclusively, holding `pid start-time`,
 * see `processStartTime`). A lock whose pid is no longer running, or is running but started at
 * another time (the pid was reused by an unrelated process), is stale and taken over.
 * @returns a function that releases the lock.
 * @throws UsageError when another running process holds the lock.
 */
export async function lockJobDir(jobDir: string, jobName: string): Promise<() => Promise<void>> {
  await mkdir(jobDir, { recursive: true });
  const lock = join(jobDir, '.berth.lock');
  const ownStart = await processStartTime(process.pid);
  const own = `${process.pid}${ownStart !== undefined ? ` ${ownStart}` : ''}`;
  for (let tries = 0; tries < 5; tries++) {
    try {
      await writeFile(lock, `${own}\n`, { flag: 'wx' });
      return async () => {
        const holder = await readFile(lock, 'utf8').catch(() => '');
        if (holder.trim() === own) await rm(lock, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(lock, 'utf8').catch(() => undefined);
    if (text === undefined) continue; // released meanwhile
    const pid = await lockHolder(text);
    if (pid !== undefined && pid !== process.pid) {
      throw new UsageError(
        `job ${jobName} is being run by another berth process (pid ${pid}); wait for it, or use another --job-name`,
      );
    }
    // An empty lock may be one being written right now: give its writer a moment.
    if (text.trim() === '' && tries === 0) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    await rm(lock, { force: true });
  }
  throw new UsageError(`job ${jobName}: could not take the lock ${lock}`);
}

/**
 * Runs (or resumes) a job and returns its summary. Trial failures never reject.
 * @throws UsageError when the job folder is locked by another running process, or
 *   holds a job with a different `identity`.
 */
export async function runJob(options: JobOptions): Promise<JobSummary> {
  const jobDir = resolve(options.jobsDir, options.jobName);
  const release = await lockJobDir(jobDir, options.jobName);
  try {
    return await runLockedJob(options, jobDir);
  } finally {
    await release();
  }
}

async function runLockedJob(options: JobOptions, jobDir: string): Promise<JobSummary> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const results = new Map<number, TrialResult>();
  const running = new Set<number>();
  let reused = 0;

  let filters = options.filters;
  let trialNames = options.plan.map((p) => p.trialName);
  // Every state file is read (and a damaged one refused) before anything is written.
  const previous = (await readJobJson(join(jobDir, 'config.json'), options.jobName)) as
    | {
        berth_identity?: Record<string, unknown>;
        berth_filters?: Record<string, unknown>;
        berth_trials?: unknown;
      }
    | undefined;
  // Every trial result, with the sha256 of its bytes (the lock keeps them as they are until used).
  const storedResults = await Promise.all(
    options.plan.map(async (trial) => {
      const file = await readJobFile(join(jobDir, trial.trialName, 'result.json'), options.jobName);
      return file && { result: file.value as unknown as TrialResult, sha256: file.sha256 };
    }),
  );
  if (options.identity) {
    const refuse = (differences: string[]) =>
      new UsageError(
        `job ${options.jobName} exists with a different configuration: ${differences.join('; ')} ` +
          `(this run vs the job's); use another --job-name or remove the folder ${jobDir}`,
      );
    const differences = identityMismatch(previous?.berth_identity, options.identity);
    if (differences.length > 0) throw refuse(differences);
    const filterDifferences =
      previous?.berth_identity && options.filters
        ? identityMismatch(previous.berth_filters ?? {}, options.filters)
        : [];
    if (filterDifferences.length > 0) {
      const known = Array.isArray(previous?.berth_trials) ? new Set(previous.berth_trials) : new Set();
      const extra = trialNames.filter((name) => !known.has(name));
      if (extra.length > 0)
        throw refuse([...filterDifferences, `${extra.length} trial(s) not in the job, e.g. ${extra[0]}`]);
      // Resuming a part of the job: it keeps its own filters and trial list.
      filters = previous?.berth_filters;
      trialNames = previous?.berth_trials as string[];
    }
  }

  await writeJsonAtomic(join(jobDir, 'config.json'), {
    job_name: options.jobName,
    source: options.source,
    agent: agentInfoForFile(options.agent.info),
    n_trials: options.plan.length,
    n_concurrent_trials: options.concurrency ?? 1,
    timeout_multiplier: options.timeoutMultiplier ?? 1,
    berth_version: VERSION,
    ...options.config,
    ...(options.identity ? { berth_identity: options.identity, berth_trials: trialNames } : {}),
    ...(options.identity && filters ? { berth_filters: filters } : {}),
  });

  // Harbor's JobResult.id is a UUID; a resumed job keeps its own.
  const jobId = await readFile(join(jobDir, 'result.json'), 'utf8')
    .then((text) => (JSON.parse(text) as { id?: unknown }).id)
    .catch(() => undefined);
  const id =
    typeof jobId === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(jobId)
      ? jobId
      : randomUUID();

  /** Trials not started because the job's model budget was spent. */
  let overBudget = 0;
  // Job result writes are serialised so the last one written is the latest state.
  let writing: Promise<void> = Promise.resolve();
  let finishedAt: string | null = null;
  const writeJobResult = () => {
    const snapshot = [...results.values()];
    const harbor = harborJobStats(
      options.plan.map((_, i) => results.get(i)).filter((r): r is TrialResult => r !== undefined),
    );
    const usage = modelUsageTotals(snapshot);
    const body = {
      id,
      job_name: options.jobName,
      berth_version: VERSION,
      started_at: startedAt,
      updated_at: new Date().toISOString(),
      finished_at: finishedAt,
      n_total_trials: options.plan.length,
      stats: {
        n_trials: harbor.n_trials,
        n_errors: harbor.n_errors,
        n_completed_trials: snapshot.filter((r) => r.berth.status !== 'cancelled').length,
        n_errored_trials: snapshot.filter((r) => r.exception_info !== null && r.berth.status !== 'cancelled')
          .length,
        n_running_trials: running.size,
        n_pending_trials: options.plan.length - results.size - running.size,
        n_cancelled_trials: snapshot.filter((r) => r.berth.status === 'cancelled').length,
        n_resolved_trials: snapshot.filter((r) => r.berth.resolved).length,
        by_status: Object.fromEntries(
          ['resolved', 'unresolved', 'error', 'empty_patch', 'patch_failed', 'cancelled'].map((s) => [
            s,
            snapshot.filter((r) => r.berth.status === s).length,
          ]),
        ),
        evals: harbor.evals,
        ...(usage ?? {}),
      },
      ...(overBudget > 0 ? { model_budget_exhausted: true, n_not_started_over_budget: overBudget } : {}),
      trials: options.plan
        .map((p, i) => ({ p, r: results.get(i) }))
        .filter((x) => x.r)
        .map(({ p, r }) => ({
          trial_name: p.trialName,
          task_name: p.task.name,
          attempt: p.attempt,
          status: r?.berth.status,
          reward: r?.verifier_result?.rewards?.reward ?? 0,
        })),
    };
    writing = writing.then(() => writeJsonAtomic(join(jobDir, 'result.json'), body)).catch(() => {});
    return writing;
  };
  await writeJobResult();

  // The sha256 of each trial's result.json as berth wrote it; saved after every trial.
  const state = await readJobState(jobDir);
  let savingState: Promise<void> = Promise.resolve();
  const recordResult = async (trialName: string) => {
    const bytes = await readFile(join(jobDir, trialName, 'result.json')).catch(() => undefined);
    if (bytes) state.result_sha256[trialName] = sha256(bytes);
    else delete state.result_sha256[trialName];
    const body = { result_sha256: { ...state.result_sha256 } };
    savingState = savingState.then(() => writeJsonAtomic(join(jobDir, JOB_STATE_FILE), body)).catch(() => {});
    return savingState;
  };

  const queue = new PQueue({ concurrency: Math.max(1, options.concurrency ?? 1) });
  const signal = options.signal;
  const onAbort = () => queue.clear();
  signal?.addEventListener('abort', onAbort, { once: true });

  options.plan.forEach((trial, index) => {
    queue.add(async () => {
      if (signal?.aborted) return;
      const trialDir = join(jobDir, trial.trialName);
      const stored = storedResults[index];
      const previous = stored?.result;
      const agent = trial.agent ?? options.agent;
      if (previous && resumeMismatch(previous, trial, agent) === undefined) {
        const recorded = state.result_sha256[trial.trialName];
        const legacy = state.legacy && recorded === undefined;
        if (recorded === stored?.sha256 || legacy) {
          // A result written by an earlier berth is brought to the current file format.
          // A failed rewrite leaves the old file, which still resumes; it never stops the job.
          if (upgradeTrialResult(previous))
            await writeJsonAtomic(join(trialDir, 'result.json'), previous).catch(() => {});
          await recordResult(trial.trialName);
          if (trial.task.verifier.kind === 'swebench')
            await writeRewardFile(trialDir, previous).catch(() => false);
          await upgradeConfigFile(join(trialDir, 'config.json')).catch(() => false);
          results.set(index, previous);
          reused++;
          options.onTrialEnd?.(previous, { reused: true, trial });
          await writeJobResult();
          return;
        }
        options.onNotice?.(
          `${trial.trialName}: result.json ${recorded ? 'changed since berth wrote it (sha256 differs)' : `is not in the job's ${JOB_STATE_FILE}`}; not kept, running the trial again`,
        );
      }
      const gateway = options.models?.gateway;
      if (gateway?.budgetExhausted) {
        if (overBudget++ === 0)
          options.onNotice?.(
            `the job's model budget is spent ($${gateway.jobCostUsd}): no further trial is started`,
          );
        return;
      }
      if (stored) await rm(trialDir, { recursive: true, force: true });
      running.add(index);
      options.onTrialStart?.(trial);
      let result: TrialResult;
      try {
        result = await runTrial({
          task: trial.task,
          agent,
          ...(options.models && trial.model
            ? {
                models: {
                  gateway: options.models.gateway,
                  target: trial.model,
                  ...(options.models.limits ? { limits: options.models.limits } : {}),
                },
              }
            : {}),
          attempt: trial.attempt,
          trialName: trial.trialName,
          trialDir,
          jobId: options.jobName,
          source: options.source,
          providers: options.providers,
          verifiers: options.verifiers,
          ...(options.timeoutMultiplier !== undefined
            ? { timeoutMultiplier: options.timeoutMultiplier }
            : {}),
          ...(options.phaseMultipliers ? { phaseMultipliers: options.phaseMultipliers } : {}),
          ...(options.verifyEmptyPatch !== undefined ? { verifyEmptyPatch: options.verifyEmptyPatch } : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        // runTrial records everything that happens inside a trial; this only catches
        // failures to write its folder, which must not stop the job either.
        result = crashedTrialResult(trial, options, error);
      } finally {
        running.delete(index);
      }
      results.set(index, result);
      await recordResult(trial.trialName);
      options.onTrialEnd?.(result, { reused: false, trial });
      await writeJobResult();
    });
  });
  await queue.onIdle();
  signal?.removeEventListener('abort', onAbort);
  const cancelled =
    (signal?.aborted ?? false) ||
    results.size + overBudget < options.plan.length ||
    [...results.values()].some((r) => r.berth.status === 'cancelled');
  finishedAt = new Date().toISOString();
  await savingState;
  await writeJobResult();
  const trials = options.plan.map((_, i) => results.get(i)).filter((r): r is TrialResult => r !== undefined);
  return {
    job_name: options.jobName,
    job_dir: jobDir,
    started_at: startedAt,
    finished_at: finishedAt,
    duration_sec: roundSec((performance.now() - started) / 1000),
    total: options.plan.length,
    resolved: trials.filter((r) => r.berth.resolved).length,
    cancelled,
    trials,
    reused,
    ...(modelUsageTotals(trials) ? { model_usage: modelUsageTotals(trials) } : {}),
    ...(overBudget > 0 ? { not_started_over_budget: overBudget } : {}),
  };
}

function crashedTrialResult(trial: PlannedTrial, options: JobOptions, error: unknown): TrialResult {
  const e = error instanceof Error ? error : new Error(String(error));
  const result = initialTrialResult({
    task: trial.task,
    trialName: trial.trialName,
    trialUri: pathToFileURL(join(resolve(options.jobsDir, options.jobName), trial.trialName)).href,
    source: options.source,
    attempt: trial.attempt,
    agent: options.agent.info,
  });
  result.finished_at = result.started_at;
  result.exception_info = {
    exception_type: e.name,
    exception_message: e.message,
    exception_traceback: e.stack ?? e.message,
    occurred_at: result.started_at,
  };
  result.berth.note = `${e.name}: ${e.message}`;
  return result;
}

/**
 * The default job name: Harbor's `YYYY-MM-DD__HH-MM-SS` (local time) plus a short random
 * suffix (`-` and 4 hex digits), so two runs started in the same second get different folders.
 */
export function defaultJobName(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}__${p(date.getHours())}-${p(date.getMinutes())}-${p(date.getSeconds())}-${randomBytes(2).toString('hex')}`;
}
