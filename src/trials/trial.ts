/**
 * Running one trial with live objects in hand (an agent, providers and verifiers already made):
 * the spec is made from them and the one engine (engine.ts) runs it. For callers that have no
 * job: tests, `berth dataset validate`, benchmarks.
 */
import type { Agent } from '../agents/agent.ts';
import type { EnvironmentProvider } from '../environments/environment.ts';
import type { TrialModels } from '../models/trial-models.ts';
import type { Task } from '../tasks/task.ts';
import type { Verifier } from '../verifiers/verifier.ts';
import { runTrial } from './engine.ts';
import type { Emit } from './events.ts';
import type { ExtendedTrialResult } from './record.ts';
import { makeTrialSpec, trialTimeouts } from './spec.ts';

export interface TrialOptions {
  task: Task;
  agent: Agent;
  /** 1-based attempt. */
  attempt: number;
  trialName: string;
  /** Host folder of this trial (created). */
  trialDir: string;
  /** The job's name (labels of what the trial starts, `job_id` of config.json). */
  jobId: string;
  /** Dataset name recorded as `source`. */
  source: string;
  providers: readonly EnvironmentProvider[];
  verifiers: readonly Verifier[];
  /** Multiplies every phase timeout (Harbor's --timeout-multiplier). */
  timeoutMultiplier?: number;
  /** Per-phase multipliers; each replaces `timeoutMultiplier` for its phase (Harbor's --agent-/--verifier-timeout-multiplier). */
  phaseMultipliers?: { agent?: number; verifier?: number };
  /** Verify empty patches too (dataset validation); by default they end as `empty_patch` without running tests. */
  verifyEmptyPatch?: boolean;
  /** The job's model gateway and this trial's model (`-m`), when the trial calls models. */
  models?: TrialModels;
  signal?: AbortSignal;
}

/** Runs one trial with the given live objects and writes its result. Never throws for what happens inside the trial. */
export async function runTrialWith(options: TrialOptions, emit?: Emit): Promise<ExtendedTrialResult> {
  const spec = makeTrialSpec({
    job: { id: options.jobId, name: options.jobId, source: options.source },
    trialName: options.trialName,
    attempt: options.attempt,
    task: options.task,
    agent: { name: options.agent.info.name, options: {} },
    timeouts: trialTimeouts(options.timeoutMultiplier, options.phaseMultipliers),
    verification: options.verifyEmptyPatch ? { verifyEmptyPatch: true } : {},
  });
  return runTrial(spec, emit, {
    trialDir: options.trialDir,
    task: options.task,
    runtime: { agent: options.agent, providers: options.providers, verifiers: options.verifiers },
    ...(options.models ? { models: options.models } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
