/**
 * The trial's records on disk: `config.json` (what the trial runs), `result.json` (Harbor's
 * TrialResult with berth's facts under `berth`) and, for multi-step tasks, each step's
 * `steps/<name>/result.json`. The engine fills a `TrialResult` as it runs; this module is the
 * one place that decides what those files hold (issue 17 makes them valid for Harbor's
 * models here, without touching the engine).
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
import { agentInfoForFile } from './file-format.ts';
import type { ExceptionInfo, TimingInfo, TrialResult } from './result.ts';

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
  task: Task;
  trialName: string;
  trialUri: string;
  source: string;
  attempt: number;
  agent: AgentInfo;
}): TrialResult {
  return {
    id: randomUUID(),
    task_name: fields.task.name,
    trial_name: fields.trialName,
    trial_uri: fields.trialUri,
    source: fields.source,
    task_checksum: taskChecksum(fields.task),
    agent_info: {
      name: fields.agent.name,
      version: fields.agent.version,
      model_info: fields.agent.modelName ? { name: fields.agent.modelName } : null,
    },
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
      instance_id: fields.task.name,
      attempt: fields.attempt,
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
      task_source: fields.task.source ?? null,
      categories: taskCategories(fields.task),
    },
  };
}

/**
 * Creates the trial folder, writes its `config.json` and returns the trial's result record
 * before any phase has run.
 */
export async function beginTrialRecord(fields: {
  task: Task;
  trialName: string;
  trialDir: string;
  attempt: number;
  jobName: string;
  source: string;
  agent: AgentInfo;
  timeoutMultiplier: number;
}): Promise<ExtendedTrialResult> {
  await mkdir(fields.trialDir, { recursive: true });
  await writeJsonAtomic(join(fields.trialDir, 'config.json'), {
    task_name: fields.task.name,
    trial_name: fields.trialName,
    attempt: fields.attempt,
    job_id: fields.jobName,
    source: fields.source,
    task_origin: fields.task.origin,
    agent: agentInfoForFile(fields.agent),
    timeout_multiplier: fields.timeoutMultiplier,
    berth_version: VERSION,
  });
  // What the agent is told, for the report's trial page (written before any untrusted code runs).
  await writeFileAtomic(join(fields.trialDir, 'instruction.md'), fields.task.instruction);
  return initialTrialResult({ ...fields, trialUri: pathToFileURL(fields.trialDir).href });
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
  await writeJsonAtomic(join(trialDir, 'steps', step.step_name, 'result.json'), step);
}

/** Writes the trial's `result.json`. */
export async function writeTrialResult(trialDir: string, result: TrialResult): Promise<void> {
  await writeJsonAtomic(join(trialDir, 'result.json'), result);
}
