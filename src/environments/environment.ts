/**
 * Stage 2 of the pipeline: start an environment. An `Environment` is where the
 * agent acts and the verifier runs: a temporary folder on this machine
 * (`local`) or a container (`docker`). Paths passed to it are paths inside
 * the environment.
 */

import type { Readable } from 'node:stream';
import type { LimitName, LimitsRecord } from '../sandbox/limits.ts';
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
  /**
   * The environment is halted (`halt`) as soon as this command ends (an agent whose work is this
   * one command, on a task whose work is taken into a fresh environment: src/trials/agent-work.ts).
   * As the command ends, inside the same exec, every other process its user may signal is
   * stopped (SIGSTOP, again until none of them runs), so nothing it left running acts between
   * its end and the caller's `halt` (Docker: `kill -STOP -1` from the exec's own shell; as root
   * that is every process of the container but that shell and pid 1). At a timeout the kill does
   * the same. Environments whose commands leave no process behind them ignore it (local: each
   * command's pid namespace dies with it). Default false.
   */
  haltOnExit?: boolean;
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
  /**
   * The resource limits the command ran into (src/sandbox/limits.ts): a fork refused at the
   * process limit, a process killed for memory, CPU time, file size, a full writable folder,
   * output cut at the cap. Absent when none.
   */
  limitsHit?: LimitName[];
}

/** The resource limits an environment applies to untrusted commands (docs/security.md). */
export interface EnvironmentLimits {
  /** The limits, how each is enforced here, and what could not be (`berth.limits` in result.json). */
  readonly record: LimitsRecord;
  /**
   * The limits any command (or any process of the environment) ran into since the last call,
   * each named once; the record is then cleared. The trial engine asks at the end of each phase.
   */
  takeHits(): Promise<LimitName[]>;
}

/** Where an environment's programs run: CPU architecture and C library (what native binaries need). */
export interface Platform {
  arch: 'x64' | 'arm64';
  libc: 'glibc' | 'musl';
}

/**
 * Files a program from outside the task needs in the environment (an installed coding agent:
 * src/agents/installed/), installed once per (tool, base image) and reused by every later
 * trial: a cached image layer (Docker) or a read-only host folder bound into the sandbox
 * (local). Nothing is fetched inside the environment and no script of the tool runs there
 * at install time.
 */
export interface ToolInstall {
  /** Name, part of the cache key and of the image name (`claude-code`). */
  readonly name: string;
  /** Exact version, part of the cache key (`2.1.197`). */
  readonly version: string;
  /**
   * Prepares the files for `platform` on the host (cached there): their folder, and whether
   * this call prepared them (false when they were in the cache).
   */
  prepare(platform: Platform, log: (line: string) => void): Promise<{ folder: string; prepared: boolean }>;
}

/** What an environment did with a {@link ToolInstall} at start. */
export interface ToolInstallRecord {
  /** Folder of the tool's files as commands in the environment see it (read-only). */
  home: string;
  platform: Platform;
  /** True when this start installed it; false when the cached install was used. */
  installed: boolean;
  /** Seconds the install took during this start (the cache look-up alone when cached). */
  durationSec: number;
  /** The install's log lines (the host preparation and the image layer build). */
  log: string[];
  /** Host folders a command must bind (read-only) to see `home`: the local sandbox. */
  binds?: readonly { path: string }[];
  /**
   * Why the install failed: the environment started without the tool, and the agent's set-up
   * reports this (an agent set-up error with the log, as Harbor's "Agent install failed").
   */
  error?: string;
}

/** An environment's entry in its install cache (see `Environment.installCache`). */
export interface InstallCache {
  /** The environment started from the entry: the install already ran there. */
  readonly hit: boolean;
  /** The entry's key (sha256 of snapshot, install command, platform). */
  readonly key: string;
  /**
   * On a hit, how the environment's files were made from the entry: `overlay` (copy-on-write,
   * nothing copied) or `copy`.
   */
  readonly method?: 'overlay' | 'copy';
  /** Why not an overlay, when one was tried and could not be mounted. */
  readonly note?: string;
  /** Saves the environment's repository as the entry (no-op on a hit); never throws (a failure is a warning). */
  save(): Promise<void>;
}

/** What an environment's {@link Environment.prepareTestRun} did. */
export interface TestRunPreparation {
  /** The toolchain whose build cache was prepared. */
  tool: 'go';
  /**
   * `hit`: this repository content was compiled into the shared cache before (nothing compiled
   * now); `filled`: the go tool compiled it now and what it made was kept; `failed`: the
   * compile step could not run or timed out (the tests compile what they need themselves);
   * `cgo`: a package the tests build has C files or imports one (`net`...), which the compile
   * step (cgo off, src/environments/local/go-cache.ts) cannot warm: nothing compiled, the tests
   * compile as without the cache.
   */
  outcome: 'hit' | 'filled' | 'failed' | 'cgo';
  /** sha256 of the repository's files (without `.git`) and the toolchain's version, when known. */
  content?: string;
  /** Files added to the shared cache. */
  added: number;
  /** Seconds it took. */
  durationSec: number;
}

/**
 * A started environment. The first five members every environment has; the rest are
 * declared capabilities: optional members an environment has when it can do that thing.
 * Callers test for a capability (`environment.setNetworkPolicy !== undefined`), never cast.
 * A new environment (a Kubernetes pod, a remote sandbox) implements the five and whichever
 * capabilities it can; the engine degrades where one is absent (see each member).
 */
export interface Environment {
  readonly kind: string;
  /** The folder the repository / task lives in, inside the environment. */
  readonly workdir: string;
  /** Whether untrusted commands run without network access (recorded in results). */
  readonly isolated: boolean;
  /** The resource limits of its commands, when the environment applies them. */
  readonly limits?: EnvironmentLimits;
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

  // Capabilities (optional).

  /**
   * Capability "base commit": the sha of the commit the environment made of the repository
   * before any agent ran (the local environment commits the materialised snapshot). Absent:
   * the engine asks git for `HEAD` where a verifier needs a base (SWE-bench).
   */
  readonly baseCommit?: string;
  /**
   * Capability "image": the image the environment started from (Docker: the task's image after
   * `--image-map`), named in errors about what the image lacks. Absent: not image-based.
   */
  readonly image?: string;
  /**
   * Capability "isolation method": how untrusted commands are isolated (`bwrap`, `unshare`,
   * `unshare-user` locally), recorded as `berth.isolation_method`. Absent: the environment's
   * `kind` is recorded when `isolated`.
   */
  readonly isolationMethodName?: string;
  /**
   * Capability "default user": the user `exec` runs as when `options.user` is not given, when
   * it is not the environment's own default (Harbor's `[agent] user`, see `withDefaultUser`).
   */
  readonly defaultExecUser?: string;
  /**
   * Capability "OOM record": how many out-of-memory kills happened in the environment since
   * the last call (the Docker engine's count), waiting up to `graceMs` milliseconds for a
   * late one. Absent: an OOM kill is only seen as `ExecResult.oomKilled`.
   */
  newOomKills?(graceMs?: number): Promise<number>;
  /**
   * Capability "network switch": puts the running environment under `policy` (Harbor's
   * per-phase `network_mode`). Absent: the environment keeps the policy it started with and
   * per-command `ExecOptions.network` is all there is.
   */
  setNetworkPolicy?(policy: NetworkPolicy): Promise<void>;
  /**
   * Capability "process control": stops every process started in the environment since it
   * started, so that none can race the kill (Docker: the container's PID 1 is killed: the
   * kernel kills every process of its pid namespace with its init, forks and successors
   * included; the file system, networks and limits stay; the container stays stopped, its
   * record and files readable, until the next command starts it again, and with it the image's
   * entrypoint). Resolves to how many processes ran besides the environment's own. Absent: the
   * environment's commands leave no process behind them (the local sandbox gives each command
   * its own pid namespace, killed when the command ends).
   */
  killStrayProcesses?(): Promise<number>;
  /**
   * With `killStrayProcesses`: the environment runs the image's entrypoint again when the next
   * command starts it again (Docker: an image with an ENTRYPOINT). A verifier never runs there
   * after an agent: the entrypoint may be a file the agent edited, or run one (breaker10 F5).
   */
  readonly entrypoint?: boolean;
  /**
   * Places whose writes `fileSystemChanges` does not list (Docker: the image's VOLUME paths, each
   * a tmpfs of berth's: docker/image-volumes.ts). A verifier never runs there after an agent: it
   * runs in a fresh environment, where those places hold the image's files again.
   */
  readonly unrecorded?: readonly string[];
  /**
   * Capability "halt": stops every process of the environment for good, at once (Docker: the
   * container is paused, its processes frozen by the cgroup freezer until `stop()` removes it;
   * local: every command still running is killed with its process group, pid namespace and
   * cgroup, and waited for). Its file system stays readable by `archive` and `download`, its
   * limits' counters by `limits.takeHits`; no command runs in it after. For reading what an
   * agent left while nothing of the agent's can still write it (src/trials/agent-work.ts). Safe
   * to call twice.
   */
  halt?(): Promise<void>;
  /**
   * Capability "process list": the environment's running processes as the engine lists them
   * from outside (Docker's `top`: each as `<pid> <start time>`, host pids, start times to the
   * second, so a reused pid reads differently). Nothing inside the environment can edit it.
   */
  processList?(): Promise<string[]>;
  /**
   * Capability "file-system record": every change of the environment's file system against
   * its image, as the engine (not the environment's own commands) records it (Docker's
   * container diff). Absent: no record (the local sandbox keeps the host read-only).
   */
  fileSystemChanges?(): Promise<FileSystemChange[]>;
  /**
   * Capability "folder transfer": a tar stream of the folder `path` inside the environment
   * (its last component as the archive's top name), for `extractArchive` of another
   * environment: a work folder crosses from one container to another without touching the host.
   * Files are stored expanded (a sparse file's holes as zeros): bound it (src/util/tar-bound.ts).
   * Bounded in time too: past `timeoutSec` (`COPY_TIMEOUT_SEC`) the stream fails with
   * `CopyTimeoutError`.
   */
  archive?(path: string, options?: { timeoutSec?: number }): Promise<Readable>;
  /**
   * Extracts a tar stream (from `archive`) into the folder `path` inside the environment; when
   * the stream fails, its error is thrown (what was extracted so far stays). Past `timeoutSec`
   * (`COPY_TIMEOUT_SEC`) it stops with `CopyTimeoutError`.
   */
  extractArchive?(path: string, archive: Readable, options?: { timeoutSec?: number }): Promise<void>;
  /**
   * Capability "install cache": the environment keeps its repository after the dataset's
   * install once per snapshot, install command and platform (local: install-cache.ts). When
   * `hit`, it started from that state and the engine skips the install; else the engine calls
   * `save()` after a successful install, before any agent code runs. Absent: the install runs
   * in every environment.
   */
  readonly installCache?: InstallCache;
  /**
   * Capability "test-run build cache": called by a verifier after the test patch is applied and
   * before the tests run, when no untrusted process is alive. The environment drops the build
   * cache the agent could write, gives the test run a fresh copy of a shared one, and first has
   * the toolchain alone (no repository code runs: compiling, vetting and linking only) compile
   * the repository into it, keeping what it made for later trials (local Go repositories:
   * src/environments/local/go-cache.ts). Resolves to undefined when there was nothing to
   * prepare. Absent: the tests run with whatever build cache the environment has.
   */
  prepareTestRun?(options?: {
    /** The files the tests are in, relative to the work folder (SWE-bench's `{tests}`): Go compiles their packages as the test command will. */
    testFiles?: readonly string[];
    /**
     * The agent's commands (and, through the repository's git settings, code of its choice in the
     * verifier's own git commands) ran in this environment: with no shared cache to give, the test
     * run still gets none of what they wrote outside the work folder (local: an empty `cache/`
     * and `tmp/`; resolves to undefined then).
     */
    agentActed?: boolean;
    signal?: AbortSignal;
  }): Promise<TestRunPreparation | undefined>;
  /**
   * Capability "installed tool": what the environment did at start with the tool its start
   * context asked for (an installed agent). Absent: no tool was asked, or the environment
   * cannot install one.
   */
  readonly toolInstall?: ToolInstallRecord;
  /**
   * Capability "model gateway folder": where the model gateway's folder (its Unix socket and
   * relay programs, src/models/access.ts) is seen inside the environment, when the start
   * context asked for it and the environment mounted it. Absent: not mounted (the local
   * environment binds it per command instead).
   */
  readonly modelGatewayDir?: string;
}

/** Context a provider gets to start an environment for one trial. */
export interface EnvironmentStartContext {
  task: Task;
  /** Job id; everything started carries it as a label so `berth clean` can find it. */
  jobId: string;
  /** Trial folder on the host (logs go there). */
  trialDir: string;
  /** A tool to install in the environment (once per tool and base image, cached). */
  tool?: ToolInstall;
  /**
   * The job's model gateway folder on the host (its Unix socket): a container mounts it
   * read-only so an agent inside reaches the gateway whatever the network (`modelGatewayDir`).
   */
  modelGatewayDir?: string;
  /**
   * Variables every command in the environment gets (Harbor's `[environment] env`, templates
   * already resolved); a command's own `ExecOptions.env` wins over them.
   */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

/** Makes environments of one kind. Registered by `EnvironmentSpec['kind']`. */
export interface EnvironmentProvider {
  readonly kind: EnvironmentSpec['kind'];
  start(context: EnvironmentStartContext): Promise<Environment>;
  /**
   * Capability "reclaim": removes what berth processes that are no longer running left in this
   * provider's backend (Docker: containers and networks labelled with a dead owner,
   * src/util/owner.ts), never what a live one holds. Resolves to how many resources went. The
   * job calls it before its trials (after `kill -9` of a previous run). Absent: nothing to do
   * beyond the temp folders every run reclaims (src/util/leftovers.ts).
   */
  reclaim?(): Promise<number>;
}

/** One entry of an environment's file-system record: a path (absolute) and what happened to it. */
export interface FileSystemChange {
  path: string;
  kind: 'added' | 'changed' | 'deleted';
}

/**
 * A copy into, out of or between environments failed for a reason of berth's or the engine's,
 * not for what the copied folder holds (the engine's error, the host's disk full): retryable.
 */
export class EnvironmentCopyError extends Error {
  override name = 'EnvironmentCopyError';
}

/** A copy into, out of or between environments passed its wall-clock bound (`COPY_TIMEOUT_SEC`). */
export class CopyTimeoutError extends EnvironmentCopyError {
  override name = 'CopyTimeoutError';
}

/**
 * Seconds any one copy into, out of or between environments may take (a folder carried from
 * container to container, an upload); past it the copy is aborted with `CopyTimeoutError`.
 * Copies out as data (`download`) take their own `CopyLimits.timeoutSec`.
 */
export const COPY_TIMEOUT_SEC = 600;

/** Harbor's log folders inside an environment (`agent`, `verifier`, `artifacts`). */
export type LogFolder = 'agent' | 'verifier' | 'artifacts';

/** Where `folder` of Harbor's log folders is inside `environment` (`/logs/agent` in containers). */
export function logsPath(environment: Pick<Environment, 'logsDir'>, folder: LogFolder): string {
  return `${(environment.logsDir ?? '/logs').replace(/\/+$/, '')}/${folder}`;
}
