/**
 * The errors a trial records, named as Harbor names them (src/harbor/trial/errors.py and
 * asyncio's CancelledError), and how an error becomes Harbor's `ExceptionInfo`.
 */
import type { AgentResult } from '../agents/agent.ts';
import type { ExceptionInfo } from './result.ts';

/**
 * Harbor's AgentTimeoutError. An agent that stops its own work at the timeout may attach what
 * it produced by then (`partialResult`, e.g. the diff at that point): the trial records the
 * timeout and still grades that result, as Harbor still runs the verifier.
 */
export class AgentTimeoutError extends Error {
  override name = 'AgentTimeoutError';
  constructor(
    message: string,
    readonly partialResult?: AgentResult,
  ) {
    super(message);
  }
}

/** The dataset's install step failed or timed out. */
export class EnvironmentSetupError extends Error {
  override name = 'EnvironmentSetupError';
}

/**
 * The environment has no git repository at its work folder where the task needs one (a
 * SWE-bench row's image that does not carry the repository at the row's path): the
 * environment's fault, never the agent's patch. Recorded in the `environment` category.
 */
export class EnvironmentRepositoryError extends EnvironmentSetupError {
  override name = 'EnvironmentRepositoryError';
}

/** A multi-step task's step preparation (`workdir/` upload, `setup.sh`) failed. */
export class StepSetupError extends Error {
  override name = 'StepSetupError';
}

/**
 * The agent's work cannot be taken: its diff against the base could not be made (git refused
 * what its work folder holds, e.g. a `.GIT/x` entry; the diff passed 50 MiB; git failed or timed
 * out on it), or its work folder could not be carried into the fresh environment that grades it
 * (src/trials/agent-work.ts). The agent's failure, not berth's: the trial ends with reward 0
 * (fail closed, `berth.status` `error`), and a retry (`-r`) does not run it again by default
 * (src/jobs/job-files.ts `DEFAULT_RETRY`): an agent that could force a retryable error would
 * get another attempt whenever it liked.
 */
export class AgentWorkError extends Error {
  override name = 'AgentWorkError';
  constructor(message: string) {
    super(`the agent's work cannot be taken: ${message}`);
    // The agent's doing, not a fault of berth's: no stack frames in the record.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** Cancellation (Ctrl-C), named as asyncio names it in Harbor. */
export class CancelledError extends Error {
  override name = 'CancelledError';
}

/**
 * Agent errors after which Harbor still runs the verifier (`SingleStepTrial._run_agent`): the
 * error is recorded and whatever the agent left is graded.
 */
export const VERIFIED_AGENT_ERRORS: ReadonlySet<string> = new Set([
  'AgentTimeoutError',
  'NonZeroAgentExitCodeError',
]);

/** The current time as results record it (ISO 8601 UTC). */
export const now = (): string => new Date().toISOString();

/** Harbor's ExceptionInfo of an error; `prefix` goes before the message (a step's name). */
export function exceptionInfo(error: unknown, prefix = ''): ExceptionInfo {
  const e = error instanceof Error ? error : new Error(String(error));
  return {
    exception_type: e.name || 'Error',
    exception_message: `${prefix}${e.message}`,
    exception_traceback: e.stack ?? e.message,
    occurred_at: now(),
  };
}

/** Harbor's ExceptionInfo of a verifier's exception (no stack: it is not a berth error). */
export function verdictExceptionInfo(v: { type: string; message: string }, prefix = ''): ExceptionInfo {
  return {
    exception_type: v.type,
    exception_message: `${prefix}${v.message}`,
    exception_traceback: `${prefix}${v.message}`,
    occurred_at: now(),
  };
}
