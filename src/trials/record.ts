/**
 * The trial's records on disk: `config.json` (Harbor's TrialConfig: what the trial runs),
 * `result.json` (Harbor's TrialResult with berth's facts under `berth`), `exception.txt` when it
 * recorded an exception and, for multi-step tasks, each step's `steps/<name>/result.json`. The
 * engine fills a `TrialResult` as it runs; this module and file-format.ts decide what those
 * files hold (Harbor's models read them: test/helpers/harbor-job-check.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentInfo } from '../agents/agent.ts';
import { taskCategories } from '../results/categories.ts';
import { taskChecksum } from '../tasks/checksum.ts';
import type { Task } from '../tasks/task.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic-write.ts';
import { VERSION } from '../version.ts';
import { now } from './errors.ts';
import { trialConfigForFile } from './file-format.ts';
import type { ExceptionInfo, TimingInfo, TrialResult } from './result.ts';
import type { TrialSpec } from './spec.ts';

/** Harbor's StepResult, with berth's details of the step. */
export interface StepResult {
  step_name: string;
  agent_result: Record<string, unknown> | null;
  verifier_result: { rewards: Record<string, number> } | null;
  exception_info: ExceptionInfo | null;
  agent_execution: TimingInfo | null;
  verifier: TimingInfo | null;
  /** berth: verifier details (test exit code, Kotlin grade, ...), and why later steps did not run. */
  berth?: { verifier_details?: Record<string, unknown> | null; stopped_after?: string };
}

/** A trial result with Harbor's `step_results` (multi-step tasks). */
export type ExtendedTrialResult = TrialResult & { step_results?: StepResult[] };

/**
 * A trial's result record before any phase has run: status `error`, no verdict, `started_at`
 * now. Pure (no I/O); the engine and the job's record of a trial that crashed outside the
 * engine both start from it.
 */
export function initialTrialResult(fields: {
  spec: TrialSpec;
  task: Task;
  trialDir: string;
  agent: AgentInfo;
}): TrialResult {
  const { spec, task, trialDir } = fields;
  const config = trialConfigForFile(spec, task, trialDir);
  return {
    id: randomUUID(),
    task_name: task.name,
    trial_name: spec.trial.name,
    trial_uri: pathToFileURL(trialDir).href,
    task_id: { path: config.task.path },
    source: spec.job.source,
    task_checksum: taskChecksum(task),
    config,
    agent_info: agentInfoOf(fields.agent, spec),
    agent_result: null,
    verifier_result: null,
    exception_info: null,
    started_at: now(),
    finished_at: '',
    environment_setup: null,
    agent_setup: null,
    agent_execution: null,
    verifier: null,
    berth: {
      version: VERSION,
      instance_id: task.name,
      attempt: spec.trial.attempt,
      status: 'error',
      resolved: false,
      patch_sha256: null,
      files: {},
      patch_apply: null,
      install: null,
      isolated: false,
      isolation_method: null,
      FAIL_TO_PASS: null,
      PASS_TO_PASS: null,
      note: '',
      verifier_details: null,
      duration_sec: 0,
      task_source: task.source ?? null,
      categories: taskCategories(task),
    },
  };
}

/**
 * Harbor's `AgentInfo`: the agent's name and version, and `model_info` for the model the trial
 * names: `-m PROVIDER/NAME` split on its first `/` as Harbor's `BaseAgent` splits it, else the
 * model an agent reports of itself (a predictions file's `model_name_or_path`); null for agents
 * that call no model (oracle, nop).
 */
export function agentInfoOf(agent: AgentInfo, spec?: Pick<TrialSpec, 'agent'>): TrialResult['agent_info'] {
  const given = spec?.agent.options.model;
  const slash = typeof given === 'string' ? given.indexOf('/') : -1;
  const model_info =
    typeof given === 'string'
      ? slash > 0
        ? { name: given.slice(slash + 1), provider: given.slice(0, slash) }
        : { name: given }
      : agent.modelName
        ? { name: agent.modelName }
        : null;
  return { name: agent.name, version: agent.version, model_info };
}

/**
 * Creates the trial folder, writes its `config.json` (Harbor's TrialConfig) and returns the
 * trial's result record before any phase has run.
 */
export async function beginTrialRecord(fields: {
  spec: TrialSpec;
  task: Task;
  trialDir: string;
  agent: AgentInfo;
}): Promise<ExtendedTrialResult> {
  await mkdir(fields.trialDir, { recursive: true });
  const result = initialTrialResult(fields);
  await writeJsonAtomic(join(fields.trialDir, 'config.json'), result.config);
  // What the agent is told, for the report's trial page (written before any untrusted code runs).
  await writeFileAtomic(join(fields.trialDir, 'instruction.md'), fields.task.instruction);
  return result;
}

/** sha256 hex of a patch (the resume key). */
export function patchSha256(patch: string): string {
  return createHash('sha256').update(patch, 'utf8').digest('hex');
}

/** An empty step result of step `name`. */
export function newStepResult(name: string): StepResult {
  return {
    step_name: name,
    agent_result: null,
    verifier_result: null,
    exception_info: null,
    agent_execution: null,
    verifier: null,
  };
}

/** Writes a step's `steps/<name>/result.json`. */
export async function writeStepResult(trialDir: string, step: StepResult): Promise<void> {
  await writeJsonAtomic(join(trialDir, 'steps', step.step_name, 'result.json'), withFileTimings(step));
}

const TIMING_KEYS = ['environment_setup', 'agent_setup', 'agent_execution', 'verifier'] as const;

/**
 * The record as Harbor's models read it: a phase that never started (a trial cancelled or
 * failed before it: its timing still holds berth's empty strings) is `null`, and a phase that
 * never ended has `finished_at: null` (Harbor's TimingInfo: date-times or null).
 */
function withFileTimings<T extends object>(record: T): T {
  const copy = { ...record } as Record<string, unknown>;
  for (const key of TIMING_KEYS) {
    const timing = copy[key] as
      | { started_at?: string | null; finished_at?: string | null }
      | null
      | undefined;
    if (!timing || typeof timing !== 'object') continue;
    if (!timing.started_at) copy[key] = null;
    else if (!timing.finished_at) copy[key] = { ...timing, finished_at: null };
  }
  return copy as T;
}

/**
 * Writes the trial's `result.json` and, when it recorded an exception, Harbor's
 * `exception.txt` (the first exception's traceback, then every later one's).
 */
export async function writeTrialResult(trialDir: string, result: TrialResult): Promise<void> {
  const all = result.berth.exceptions ?? (result.exception_info ? [result.exception_info] : []);
  if (all.length > 0)
    await writeFileAtomic(
      join(trialDir, 'exception.txt'),
      `${all.map((e) => `${e.exception_type}: ${e.exception_message}\n${tracebackOf(e)}`).join('\n')}\n`,
    );
  await writeJsonAtomic(join(trialDir, 'result.json'), withFileTimings(result));
}

/** The traceback of an exception without the message line it starts with, when it repeats it. */
function tracebackOf(e: ExceptionInfo): string {
  const tb = e.exception_traceback;
  const first = `${e.exception_type}: ${e.exception_message}`;
  return tb.startsWith(first) ? tb.slice(first.length).replace(/^\n/, '') : tb;
}
