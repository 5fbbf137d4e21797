/**
 * Stage 4 of the pipeline: verify. A verifier runs the task's hidden tests in
 * the environment after the agent is done and turns what they report into
 * rewards. It is fail-closed: anything the agent could have forged (files it
 * wrote, lines it printed) never counts, and an unreadable result is reward 0
 * with an exception named as Harbor names it.
 */
import type { AgentResult } from '../agents/agent.ts';
import type { Environment } from '../environments/environment.ts';
import type { Task, VerifierSpec } from '../tasks/task.ts';

export interface VerifyContext {
  task: Task;
  environment: Environment;
  agentResult: AgentResult;
  /** Host trial folder; the verifier writes its logs under `verifier/`. */
  trialDir: string;
  /** Verifier timeout in seconds, after multipliers. */
  timeoutSec: number;
  /**
   * The repository's base commit inside the environment (what "reset to base"
   * means), when the environment has one; the verifier falls back to `HEAD`.
   */
  baseCommit?: string;
  signal?: AbortSignal;
}

export interface VerifierResult {
  /** Metric name -> value; `reward` is the main one (Harbor's `verifier_result.rewards`). */
  rewards: Record<string, number>;
  /** Grading details (per-test verdicts, counts, reasons); shape depends on the verifier kind. */
  details?: Record<string, unknown>;
  /** Set when the verifier could not produce a trustworthy reward (Harbor's exception names). */
  exception?: { type: string; message: string };
}

export interface Verifier {
  readonly kind: VerifierSpec['kind'];
  verify(context: VerifyContext): Promise<VerifierResult>;
}
