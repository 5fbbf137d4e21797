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

/** Passed and expected counts of one category of expected tests. */
export interface TestCounts {
  passed: number;
  total: number;
}

export interface VerifierResult {
  /** Metric name -> value; `reward` is the main one (Harbor's `verifier_result.rewards`). */
  rewards: Record<string, number>;
  /**
   * The verifier's own verdict, when its grading decides one (SWE-bench's resolved /
   * unresolved / error). Absent: an exception makes it `error`, else `reward >= 1` resolved.
   */
  status?: 'resolved' | 'unresolved' | 'error';
  /** Counts of the expected tests (SWE-bench-style graders). */
  FAIL_TO_PASS?: TestCounts;
  PASS_TO_PASS?: TestCounts;
  /** Why the trial is not resolved, in a few words (the error's reason, which expected tests failed). */
  reason?: string;
  /** Other facts worth a word in the trial's note (e.g. discarded agent changes). */
  notes?: string[];
  /** Files the verifier wrote in the trial folder, relative to it, by role. */
  files?: { test_output?: string; report?: string };
  /** Grading details (per-test verdicts, parser, exit code...); kept as `berth.verifier_details`. */
  details?: Record<string, unknown>;
  /** Set when the verifier could not produce a trustworthy reward (Harbor's exception names). */
  exception?: { type: string; message: string };
}

export interface Verifier {
  readonly kind: VerifierSpec['kind'];
  verify(context: VerifyContext): Promise<VerifierResult>;
  /**
   * The counts a trial starts with before it is verified (e.g. FAIL_TO_PASS 0 of N), so a trial
   * that ends before its tests ran still says what was expected.
   */
  expectedCounts?(task: Task): { FAIL_TO_PASS: TestCounts; PASS_TO_PASS: TestCounts } | undefined;
  /**
   * The verifier resets files to the repository's base commit: when the environment declares
   * none (`Environment.baseCommit`), the engine records `HEAD` before the agent runs.
   */
  readonly needsBaseCommit?: boolean;
  /** The verifier grades what the agent returns (a patch): an agent that returns nothing is an error. */
  readonly needsAgentResult?: boolean;
  /**
   * The verifier grades the agent's work folder as a diff against the base commit: an agent
   * that acted in its environment and returned no patch is graded in a FRESH environment of the
   * task that receives only that diff, taken without running anything of the agent's
   * (src/trials/agent-work.ts), as a `command` agent's SWE-bench diff is
   * (`AgentResult.gradeInFreshEnvironment`). One-step tasks only.
   */
  readonly gradesInFreshEnvironment?: boolean;
  /**
   * The verifier writes no reward file of its own: the engine writes Harbor's
   * `verifier/reward.txt` from its rewards (never over a file the task's tests wrote).
   */
  readonly rewardFileByEngine?: boolean;
}
