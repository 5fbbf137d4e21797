/**
 * Running function-level samples: a fresh folder, an unprivileged user, no
 * network, resource limits, a wall-clock timeout and a whole-process-group
 * kill, through the one sandbox of src/sandbox/ (its minimal view).
 * Isolation, in order of preference:
 *
 * - `bwrap` (Debian's bubblewrap, run as the unprivileged user): new user,
 *   pid, network, ipc and uts namespaces; only `/usr`, `/etc` and the paths an
 *   executor asks for are visible, read-only; the sample folder is the only
 *   writable place (`/sample`), `/tmp` is a small private tmpfs.
 * - `unshare` (util-linux): new user, pid and network namespaces; the file
 *   system is the host's, protected only by the unprivileged user's rights.
 * - `none`: no namespaces; limits and the user still apply, the result
 *   carries a warning.
 * - `docker` (`--sandbox docker`): one `docker run` per command with the same
 *   limits as container options.
 *
 * Limits (src/sandbox/command.ts): RLIMIT_DATA (memory, bytes; unlike
 * RLIMIT_AS it leaves the large virtual reservations of V8, Go and the JVM
 * alone), RLIMIT_NPROC (processes of the sandbox user; binds only because the
 * user is not root), RLIMIT_CPU (seconds), RLIMIT_FSIZE (largest file),
 * RLIMIT_CORE 0; and where cgroups work (src/sandbox/cgroup.ts) a group per
 * command with the same process limit and twice the memory limit, as a
 * backstop for all of the command's processes together.
 *
 * When berth runs as root, each concurrent slot runs as its own uid
 * (src/sandbox/identity.ts): process counts are per uid, so a fork bomb in one
 * slot cannot starve another.
 */
import { spawnSync } from 'node:child_process';
import { rmdirSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrerequisiteError } from '../errors.ts';
import { startCommand } from '../sandbox/command.ts';
import { slotIdentity } from '../sandbox/identity.ts';
import {
  checkMinimalKind,
  checkMinimalKindAsync,
  closeInheritedFds,
  minimalViewPrefix,
} from '../sandbox/isolation.ts';
import { type LimitName, limitsHit } from '../sandbox/limits.ts';
import { runToEnd, SandboxProcess } from '../sandbox/process.ts';
import { recordLeftover } from '../util/leftovers.ts';
import type { SandboxKind, SandboxOptions } from './types.ts';

/** Path of the sample folder inside a bwrap sandbox. */
export const SANDBOX_DIR = '/sample';

export const DEFAULT_SANDBOX: SandboxOptions = {
  kind: 'auto',
  memoryBytes: 2 * 1024 ** 3,
  maxProcesses: 64,
  maxOutputBytes: 1024 * 1024,
  diskBytes: 256 * 1024 * 1024,
};

/** Largest file a sample may write, in bytes. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Size of the private /tmp in a bwrap sandbox, in bytes. */
const TMPFS_BYTES = 64 * 1024 * 1024;

let detected: { kind: SandboxKind; warning?: string } | undefined;

/**
 * Finds the best isolation that works here (tried once, cached): bwrap, then
 * unshare, then none. `preferred` other than `auto` forces a kind (and
 * throws when it does not work).
 */
export function detectSandbox(preferred: SandboxOptions['kind'] = 'auto'): {
  kind: SandboxKind;
  warning?: string;
} {
  if (preferred === 'none') return { kind: 'none', warning: 'ran unsandboxed (--sandbox none)' };
  if (preferred === 'docker') {
    const out = spawnSync('docker', ['version', '--format', '{{.Server.Version}}'], {
      stdio: 'ignore',
      timeout: 20_000,
    });
    if (out.status !== 0)
      throw new PrerequisiteError(
        '--sandbox docker: no Docker engine answers (start dockerd, or use --sandbox auto)',
      );
    return { kind: 'docker' };
  }
  if (preferred === 'auto' && detected) return detected;
  let result: { kind: SandboxKind; warning?: string } | undefined;
  if ((preferred === 'auto' || preferred === 'bwrap') && checkMinimalKind('bwrap') === undefined) {
    result = { kind: 'bwrap' };
  } else if ((preferred === 'auto' || preferred === 'unshare') && checkMinimalKind('unshare') === undefined) {
    result = {
      kind: 'unshare',
      warning:
        'bubblewrap unavailable: isolated with unshare (no network, own pid namespace) but the file system is shared',
    };
  } else if (preferred !== 'auto') {
    throw new Error(`sandbox ${preferred} does not work on this machine`);
  } else {
    result = {
      kind: 'none',
      warning:
        'ran unsandboxed: neither bubblewrap nor unshare works here (install Debian package bubblewrap)',
    };
  }
  if (preferred === 'auto') detected = result;
  return result;
}

/**
 * Probes the isolation `detectSandbox(preferred)` will pick without blocking, so that the probe
 * runs while berth reads its files; `detectSandbox` then answers from what it found.
 */
export async function prepareSandbox(preferred: SandboxOptions['kind'] = 'auto'): Promise<void> {
  if (preferred !== 'auto' && preferred !== 'bwrap' && preferred !== 'unshare') return;
  if (preferred === 'auto' && detected) return;
  if (preferred !== 'unshare' && (await checkMinimalKindAsync('bwrap')) === undefined) return;
  if (preferred !== 'bwrap') await checkMinimalKindAsync('unshare');
}

/** Largest file a command may write: the per-file cap, or the folder's size when that is smaller. */
function fileLimit(options: SandboxOptions): number {
  return Math.min(MAX_FILE_BYTES, options.diskBytes ?? MAX_FILE_BYTES);
}

/** What to sandbox. */
export interface SandboxCommand {
  /** Program and arguments, as seen inside the sandbox. Use `dirInside` to name files in the sample folder. */
  argv: string[];
  /** Host folder holding the sample's files (owned by the slot's uid). */
  workDir: string;
  /** Environment of the program (PATH, HOME and TMPDIR are set when missing). */
  env?: Record<string, string>;
  /** Extra host paths made visible read-only at the same path (e.g. a node_modules folder). */
  readOnlyPaths?: readonly string[];
  /** bwrap only: host folders made visible read-only at another path (isolation.ts `MinimalViewSpec.readOnlyAt`). */
  readOnlyAt?: readonly { source: string; target: string }[];
  /** CPU-time limit in seconds (RLIMIT_CPU); default from the wall-clock limit (src/sandbox/limits.ts). */
  cpuSec?: number;
  /**
   * bwrap only: /sample is a fresh tmpfs of `options.diskBytes` instead of `workDir` (for a command
   * that needs no file from the host, like the Python worker): the folder's size is bounded.
   */
  privateDir?: boolean;
  /**
   * bwrap only (a long-lived worker): read-only `/` and `/dev`, the command as pid 1
   * (isolation.ts `MinimalViewSpec.sealed`).
   */
  sealed?: boolean;
  slot: number;
  options: SandboxOptions;
}

/** The folder a program sees as its sample folder. */
export function dirInside(kind: SandboxKind, workDir: string): string {
  return kind === 'bwrap' || kind === 'docker' ? SANDBOX_DIR : workDir;
}

/** Image of the docker sandbox when none is given. */
export const DEFAULT_IMAGE = 'berth-base:bookworm';
/** Label on every container the docker sandbox starts (`docker ps -f label=berth.functional`). */
export const DOCKER_LABEL = 'berth.functional';

/** `docker run` arguments up to the command: no network, limits, a read-only root, the sample folder at /sample. */
function dockerArgs(command: SandboxCommand, name: string, env: Record<string, string>): string[] {
  const o = command.options;
  const identity = slotIdentity(command.slot) ?? { uid: 65534, gid: 65534 };
  const args = [
    'run',
    '--rm',
    '-i',
    '--name',
    name,
    '--label',
    `${DOCKER_LABEL}=${process.pid}`,
    '--network',
    'none',
  ];
  args.push(
    '--memory',
    String(o.memoryBytes),
    '--memory-swap',
    String(o.memoryBytes),
    '--pids-limit',
    String(o.maxProcesses),
  );
  args.push('--ulimit', 'core=0', '--ulimit', `fsize=${fileLimit(o)}`);
  if (command.cpuSec !== undefined) args.push('--ulimit', `cpu=${Math.max(1, Math.ceil(command.cpuSec))}`);
  args.push(
    '--user',
    `${identity.uid}:${identity.gid}`,
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
  );
  args.push(
    '--read-only',
    '--tmpfs',
    `/tmp:size=${TMPFS_BYTES}`,
    '-v',
    `${command.workDir}:${SANDBOX_DIR}`,
    '-w',
    SANDBOX_DIR,
  );
  for (const path of command.readOnlyPaths ?? []) args.push('-v', `${path}:${path}:ro`);
  for (const [key, value] of Object.entries(env)) args.push('-e', `${key}=${value}`);
  args.push(o.image ?? DEFAULT_IMAGE);
  return args;
}

/** Starts a sandboxed process (in its own process group) with piped stdio. */
export function spawnSandboxed(command: SandboxCommand & { timeoutSec?: number }): {
  proc: SandboxProcess;
  kind: SandboxKind;
  warning?: string;
} {
  const { kind, warning } = detectSandbox(command.options.kind);
  const inner = dirInside(kind, command.workDir);
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: inner,
    TMPDIR: kind === 'bwrap' ? '/tmp' : inner,
    LANG: 'C.UTF-8',
    ...command.env,
  };
  if (kind === 'docker') {
    const name = `berth-fn-${process.pid}-${command.slot}-${Math.random().toString(36).slice(2, 10)}`;
    const proc = new SandboxProcess(['docker', ...dockerArgs(command, name, env), ...command.argv], {
      cwd: command.workDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
      // A container whose `docker run` already returned is gone (--rm); only a running one needs removing.
      onKill: () => {
        const rm = new SandboxProcess(['docker', 'rm', '-f', name], {
          cwd: '/',
          env: process.env,
          stdin: 'ignore',
        });
        rm.child.stdout?.resume();
        rm.child.stderr?.resume();
      },
    });
    return { proc, kind };
  }
  const o = command.options;
  // Descriptors berth's parent leaked (not close-on-exec) are closed before the sandbox starts.
  const prefix = [
    ...closeInheritedFds(),
    ...(kind === 'bwrap' || kind === 'unshare'
      ? minimalViewPrefix(kind, {
          readOnly: command.readOnlyPaths ?? [],
          ...(command.readOnlyAt ? { readOnlyAt: command.readOnlyAt } : {}),
          writable: command.workDir,
          at: SANDBOX_DIR,
          tmpfsBytes: TMPFS_BYTES,
          ...(command.privateDir ? { privateBytes: o.diskBytes ?? DEFAULT_SANDBOX.diskBytes } : {}),
          ...(command.sealed ? { sealed: true } : {}),
        })
      : []),
  ];
  const { proc } = startCommand({
    argv: command.argv,
    prefix,
    cwd: command.workDir,
    env,
    spawnAs: slotIdentity(command.slot),
    limits: {
      processes: o.maxProcesses,
      memoryBytes: o.memoryBytes,
      fileBytes: fileLimit(o),
      ...(command.cpuSec !== undefined ? { cpuSec: command.cpuSec } : {}),
      ...(command.timeoutSec !== undefined ? { timeoutSec: command.timeoutSec } : {}),
      alwaysRlimits: true,
      groupMemoryBytes: 2 * o.memoryBytes,
    },
  });
  return { proc, kind, ...(warning ? { warning } : {}) };
}

/**
 * The line a command run with `markStart` writes first on stdout, from inside the sandbox, just
 * before the command itself is run: once it is there, the sandbox was set up and whatever else
 * the command prints or exits with is the sample's, never berth's or bwrap's own failure.
 */
const START_MARK = 'berth-sandbox-started';

/** `argv` behind a step that writes START_MARK on stdout and then runs it (same process). */
function markingStart(argv: string[]): string[] {
  return ['sh', '-c', `printf '%s\\n' ${START_MARK} && exec "$@"`, 'berth-start', ...argv];
}

export interface SandboxRunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** True when stdout+stderr passed the cap (the rest was discarded). */
  truncated: boolean;
  /** Wall time in seconds. */
  durationSec: number;
  kind: SandboxKind;
  warning?: string;
  /** The sandbox could not start (spawn error). */
  spawnError?: string;
  /** Limits the command ran into (src/sandbox/limits.ts; from its cgroup where there is one). */
  limitsHit: LimitName[];
  /**
   * With `markStart`: whether the sandbox was set up and the command started (its start mark came,
   * through stdout, before anything the command could write). False: the sandbox (bwrap, unshare,
   * prlimit, the cgroup step, docker) failed, and stderr is its message.
   */
  started?: boolean;
}

/** Runs a sandboxed command to completion, killing its group after `timeoutSec` of wall time. */
export async function runSandboxed(
  command: SandboxCommand & {
    timeoutSec: number;
    stdin?: string;
    signal?: AbortSignal;
    /** Tell the sandbox's own failures from the command's (`started` in the result). */
    markStart?: boolean;
  },
): Promise<SandboxRunResult> {
  const { proc, kind, warning } = spawnSandboxed(
    command.markStart ? { ...command, argv: markingStart(command.argv) } : command,
  );
  const run = await runToEnd(proc, {
    timeoutSec: command.timeoutSec,
    ...(command.signal ? { signal: command.signal } : {}),
    input: command.stdin ?? '',
    maxOutputBytes: command.options.maxOutputBytes,
    capture: 'separate',
  });
  const truncated = run.droppedBytes > 0;
  const mark = `${START_MARK}\n`;
  const started = command.markStart ? run.stdout.startsWith(mark) : undefined;
  return {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    stdout: started ? run.stdout.slice(mark.length) : run.stdout,
    stderr: run.stderr,
    truncated,
    durationSec: run.durationSec,
    kind,
    ...(warning ? { warning } : {}),
    ...(run.spawnError ? { spawnError: run.spawnError } : {}),
    ...(started !== undefined ? { started } : {}),
    limitsHit: limitsHit({
      exitCode: run.exitCode,
      signal: run.signal,
      ...(run.stats ? { stats: run.stats } : {}),
      truncated,
    }),
  };
}

/**
 * This process's folder of sample folders, `<temp folder>/berth-functional/berth-p<pid>`: removed
 * at exit when empty, and recorded as this process's leftover (src/util/leftovers.ts) so that
 * `berth clean` removes it after a `kill -9`.
 */
export function sampleRoot(): string {
  return join(tmpdir(), 'berth-functional', `berth-p${process.pid}`);
}

let rootCleanup = false;

/** A fresh folder for one sample (or one worker), owned by the slot's uid. Remove it with `removeDir`. */
export async function makeSampleDir(slot: number, label = 'sample'): Promise<string> {
  const root = sampleRoot();
  await mkdir(root, { recursive: true, mode: 0o711 });
  if (!rootCleanup) {
    rootCleanup = true;
    process.once('exit', () => {
      try {
        rmdirSync(root);
      } catch {
        /* not empty or gone */
      }
    });
    recordLeftover(root);
  }
  const dir = await mkdtemp(join(root, `${label}-`));
  const identity = slotIdentity(slot);
  if (identity) await chown(dir, identity.uid, identity.gid);
  return dir;
}

/** Removes a sample folder and everything in it (as berth's user, so the sample's files go too). */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Removes this process's sample root when it is empty (call when no sample runs any more). */
export async function removeSampleRoot(): Promise<void> {
  await rmdir(sampleRoot()).catch(() => {});
}
