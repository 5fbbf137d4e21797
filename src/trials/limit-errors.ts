/**
 * A resource limit hit in a phase is that phase's error. The environment
 * detects what its commands ran into (`Environment.limits.takeHits()`:
 * cgroup counters, the Docker engine's OOM events, SIGXCPU/SIGXFSZ, a full
 * writable folder); the engine asks at the end of each phase and, when a
 * limit was hit, records the phase's error instead of a generic one:
 *
 * | phase | memory | processes | disk | file size | CPU time |
 * |---|---|---|---|---|---|
 * | environment set-up (install) | `EnvironmentSetupOutOfMemoryError` | `EnvironmentSetupProcessLimitError` | `EnvironmentSetupDiskLimitError` | `EnvironmentSetupFileSizeLimitError` | `EnvironmentSetupCpuTimeLimitError` |
 * | agent set-up | `AgentSetupOutOfMemoryError` | `AgentSetupProcessLimitError` | ... | ... | ... |
 * | agent | `AgentOutOfMemoryError` | `AgentProcessLimitError` | ... | ... | ... |
 * | verifier | `VerifierOutOfMemoryError` | `VerifierProcessLimitError` | ... | ... | ... |
 *
 * A kill for the memory limit is named for its cause where the sandbox can tell
 * it (src/sandbox/limits.ts `limitsHit`): files of a disk filler held in the local
 * sandbox's in-memory writable folder are a disk limit; a fork bomb's many small
 * processes are a process limit; anything else is out of memory.
 *
 * Output cut at its cap is recorded by the command's log (a visible mark) and
 * is not an error. When several limits were hit, the first in the table's
 * order names the error; the message lists them all.
 */
import type { Environment } from '../environments/environment.ts';
import type { LimitName } from '../sandbox/limits.ts';

/** The phases a limit error is named after. */
export type LimitPhase = 'environment-setup' | 'agent-setup' | 'agent' | 'verifier';

const PHASE_NAMES: Record<LimitPhase, string> = {
  'environment-setup': 'EnvironmentSetup',
  'agent-setup': 'AgentSetup',
  agent: 'Agent',
  verifier: 'Verifier',
};

/** Limits that make a phase an error, in the order that names the error. */
const ERROR_LIMITS: { limit: LimitName; suffix: string; what: string }[] = [
  {
    limit: 'memory',
    suffix: 'OutOfMemoryError',
    what: 'a process was killed for exceeding the memory limit',
  },
  {
    limit: 'processes',
    suffix: 'ProcessLimitError',
    what: 'too many processes at once: the process limit refused a fork, or their memory reached the memory limit (fork bomb?)',
  },
  {
    limit: 'disk',
    suffix: 'DiskLimitError',
    what: 'files filled a writable folder: its size limit, or the memory limit of the sandbox folder that lives in memory',
  },
  {
    limit: 'file-size',
    suffix: 'FileSizeLimitError',
    what: 'a process wrote a file past the file-size limit',
  },
  { limit: 'cpu-time', suffix: 'CpuTimeLimitError', what: 'a process used up its CPU time' },
];

/** A resource limit hit in a phase (named `<Phase><Limit>Error`, e.g. `AgentOutOfMemoryError`). */
export class ResourceLimitError extends Error {
  override readonly name: string;
  constructor(
    readonly phase: LimitPhase,
    readonly limits: readonly LimitName[],
    name: string,
    message: string,
  ) {
    super(message);
    this.name = name;
    // A limit hit is the untrusted code's doing, not berth's: no stack frames in the record.
    this.stack = `${name}: ${message}`;
  }
}

/** The error of `phase` for the limits in `hits`, or undefined when none of them is an error. */
export function limitError(phase: LimitPhase, hits: readonly LimitName[]): ResourceLimitError | undefined {
  const found = ERROR_LIMITS.filter((e) => hits.includes(e.limit));
  const first = found[0];
  if (!first) return undefined;
  const label = phase.replace('-', ' ');
  return new ResourceLimitError(
    phase,
    found.map((e) => e.limit),
    `${PHASE_NAMES[phase]}${first.suffix}`,
    `${label}: ${found.map((e) => e.what).join('; ')} (docs/security.md, resource limits)`,
  );
}

/**
 * Asks the environment which limits its commands ran into since the last call and returns the
 * phase's error for them, or undefined (no limits capability, or nothing hit). Call it at the
 * end of each phase, and with the phase's own error when it failed: a limit hit explains it.
 */
export async function phaseLimitError(
  phase: LimitPhase,
  environment: Environment | undefined,
): Promise<ResourceLimitError | undefined> {
  const hits = (await environment?.limits?.takeHits().catch(() => [])) ?? [];
  return limitError(phase, hits);
}

/**
 * Runs one phase: its error, when a limit was hit during it, becomes the phase's limit error;
 * a phase that ends well but hit a limit throws the limit error.
 * @throws ResourceLimitError, or what the phase threw when no limit was hit
 */
export async function withLimitErrors<T>(
  phase: LimitPhase,
  environment: Environment | undefined,
  run: () => Promise<T>,
): Promise<T> {
  let value: T;
  try {
    value = await run();
  } catch (error) {
    throw (await phaseLimitError(phase, environment)) ?? error;
  }
  const limit = await phaseLimitError(phase, environment);
  if (limit) throw limit;
  return value;
}
