/**
 * Stage 2 of the pipeline: start an environment. An `Environment` is where the
 * agent acts and the verifier runs: a temporary folder on this machine
 * (`local`) or a container (`docker`). Paths passed to it are paths inside
 * the environment.
 */
import type { EnvironmentSpec, NetworkPolicy, Task } from '../tasks/task.ts';
import type { CopyLimits, CopyReport } from '../util/safe-fs.ts';

/** Options of one command run in an environment. */
export interface ExecOptions {
  /** Working directory inside the environment; default the environment's `workdir`. */
  cwd?: string;
  env?: Record<string, string>;
  /** Wall-clock limit in seconds; the whole process group is killed when it passes. */
  timeoutSec?: number;
  /** User to run as (a name or uid); default the environment's default user. */
  user?: string;
  /** Network for this command; default the environment's policy. */
  network?: NetworkPolicy;
  /**
   * berth's own bookkeeping (git commands on berth-chosen paths, no code from the task or the
   * agent): an environment may skip the isolation wrapper it puts around untrusted commands
   * (the local environment does not: its sandbox runs them as the trial's uid). Default false.
   */
  trusted?: boolean;
  /**
   * The task's own set-up command (the dataset's `install`, run before any code of the
   * agent exists): an environment may run it with the host's rights, outside the sandbox its
   * untrusted commands get (the local environment does, so `pip install` into the host's
   * interpreter keeps working). Default false.
   */
  setup?: boolean;
  /**
   * Host folders the command sees at the same path, writable or read-only (the local
   * environment's sandbox hides the rest of the host's writable places and its /tmp; the
   * command agent's log folder and `--agent-mount` folders). Containers ignore it: they get
   * files by upload.
   */
  binds?: readonly { path: string; writable?: boolean }[];
  /** Host file that receives stdout and stderr interleaved, capped at `maxOutputBytes`. */
  outputFile?: string;
  /** Cap on captured output in bytes; past it the output ends with a visible truncation mark. */
  maxOutputBytes?: number;
  /** Content given on standard input (e.g. a patch for `git apply -`); stdin is empty otherwise. */
  input?: string | Uint8Array;
  signal?: AbortSignal;
}

/** Outcome of one command. */
export interface ExecResult {
  /** Exit code, or null when killed by a signal. */
  exitCode: number | null;
  signal?: string;
  timedOut: boolean;
  /** Captured stdout and stderr interleaved (also written to `outputFile` when given). */
  output: string;
  /** True when the output passed `maxOutputBytes` and was cut. */
  truncated: boolean;
  /** Wall time in seconds. */
  durationSec: number;
  /** True when the command was killed for exceeding the memory limit. */
  oomKilled?: boolean;
}

/** A started environment. */
export interface Environment {
  readonly kind: string;
  /** The folder the repository / task lives in, inside the environment. */
  readonly workdir: string;
  /** Whether untrusted commands run without network access (recorded in results). */
  readonly isolated: boolean;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /**
   * Copies a host file or folder into the environment. A link untrusted code planted at or
   * above `environmentPath` is replaced, never written through (src/util/safe-fs.ts).
   */
  upload(hostPath: string, environmentPath: string): Promise<void>;
  /**
   * Copies a file or folder out of the environment into `hostPath` (a folder berth owns) as
   * data: regular files and folders only, capped by `limits`; links, devices, fifos and
   * sockets are recorded in the report, never followed or created; names already at
   * `hostPath` are kept (berth's own records win). See src/util/safe-fs.ts.
   * @throws when `environmentPath` does not exist
   */
  download(environmentPath: string, hostPath: string, limits?: CopyLimits): Promise<CopyReport>;
  /**
   * Capability "logs folder": the folder inside the environment holding Harbor's
   * `agent/`, `verifier/` and `artifacts/` log folders, which untrusted code writes and
   * berth copies out with `download`. Absent: `/logs` (Harbor's `EnvironmentPaths`).
   */
  readonly logsDir?: string;
  /** Stops and removes everything it started. Safe to call twice. */
  stop(): Promise<void>;
}

/** Context a provider gets to start an environment for one trial. */
export interface EnvironmentStartContext {
  task: Task;
  /** Job id; everything started carries it as a label so `berth clean` can find it. */
  jobId: string;
  /** Trial folder on the host (logs go there). */
  trialDir: string;
  signal?: AbortSignal;
}

/** Makes environments of one kind. Registered by `EnvironmentSpec['kind']`. */
export interface EnvironmentProvider {
  readonly kind: EnvironmentSpec['kind'];
  start(context: EnvironmentStartContext): Promise<Environment>;
}

/** Harbor's log folders inside an environment (`agent`, `verifier`, `artifacts`). */
export type LogFolder = 'agent' | 'verifier' | 'artifacts';

/** Where `folder` of Harbor's log folders is inside `environment` (`/logs/agent` in containers). */
export function logsPath(environment: Pick<Environment, 'logsDir'>, folder: LogFolder): string {
  return `${(environment.logsDir ?? '/logs').replace(/\/+$/, '')}/${folder}`;
}
