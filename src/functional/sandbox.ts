/**
 * Running untrusted programs: a fresh folder, an unprivileged user, no
 * network, resource limits, a wall-clock timeout and a whole-process-group
 * kill. Isolation, in order of preference:
 *
 * - `bwrap` (Debian's bubblewrap, run as the unprivileged user): new user,
 *   pid, network, ipc and uts namespaces; only `/usr`, `/etc` and the paths an
 *   executor asks for are visible, read-only; the sample folder is the only
 *   writable place (`/sample`), `/tmp` is a small private tmpfs.
 * - `unshare` (util-linux): new user, pid and network namespaces; the file
 *   system is the host's, protected only by the unprivileged user's rights.
 * - `none`: no namespaces; limits and the user still apply, the result
 *   carries a warning.
 *
 * Limits (applied with util-linux `prlimit` before the sandbox starts):
 * RLIMIT_DATA (memory, bytes; unlike RLIMIT_AS it leaves the large virtual
 * reservations of V8, Go and the JVM alone), RLIMIT_NPROC (processes of the
 * sandbox user; binds only because the user is not root), RLIMIT_CPU
 * (seconds), RLIMIT_FSIZE (largest file), RLIMIT_CORE 0.
 *
 * When berth runs as root, each concurrent slot runs as its own uid
 * (`BERTH_SANDBOX_UID_BASE`, default 61000, plus the slot number): process
 * counts are per uid, so a fork bomb in one slot cannot starve another. The
 * uids need no /etc/passwd entry.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrerequisiteError } from '../errors.ts';
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

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Slots per berth process: the most samples one evaluation runs at once. */
export const MAX_SLOTS = 64;
/** Blocks of MAX_SLOTS uids that concurrent berth processes can claim. */
const UID_BLOCKS = 1000;
let claimedBase: number | undefined;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The first uid of this process's block. Two berth processes running at once
 * must not share uids (process limits count per uid), so each claims a block
 * with a lock file named after it, holding its pid; a lock whose pid is gone
 * is taken over. The lock is removed at exit.
 */
function uidBase(): number {
  if (claimedBase !== undefined) return claimedBase;
  const first = Number(process.env.BERTH_SANDBOX_UID_BASE ?? 61000);
  const locks = join(tmpdir(), 'berth-functional-uids');
  mkdirSync(locks, { recursive: true, mode: 0o700 });
  // Start at a block chosen from the pid so that concurrent processes rarely even try the same lock.
  const start = process.pid % UID_BLOCKS;
  for (let i = 0; i < UID_BLOCKS; i++) {
    const block = (start + i) % UID_BLOCKS;
    const lock = join(locks, String(block));
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(lock, String(process.pid), { flag: 'wx' });
        claimedBase = first + block * MAX_SLOTS;
        process.once('exit', () => rmSync(lock, { force: true }));
        return claimedBase;
      } catch {
        // Taken. Take it over only when its owner is gone and the lock is not brand new.
        try {
          const owner = Number(readFileSync(lock, 'utf8') || 0);
          if (owner > 0 && processAlive(owner)) break;
          if (Date.now() - statSync(lock).mtimeMs < 5000) break;
          rmSync(lock, { force: true });
        } catch {
          /* removed meanwhile: try again */
        }
      }
    }
  }
  throw new Error(`no free block of sandbox uids (${UID_BLOCKS} berth processes running?)`);
}

/**
 * The uid/gid a slot runs as (its own per slot and per berth process), or
 * undefined when berth is not root (then it runs as the current user).
 */
export function slotIdentity(slot: number): { uid: number; gid: number } | undefined {
  if (!isRoot) return undefined;
  if (slot < 0 || slot >= MAX_SLOTS) throw new RangeError(`slot ${slot} outside 0..${MAX_SLOTS - 1}`);
  const uid = uidBase() + slot;
  return { uid, gid: uid };
}

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
  const identity = slotIdentity(0);
  const tryRun = (argv: string[]): boolean => {
    const out = spawnSync(argv[0] as string, argv.slice(1), {
      stdio: 'ignore',
      timeout: 10_000,
      ...(identity ? { uid: identity.uid, gid: identity.gid } : {}),
      cwd: '/',
    });
    return out.status === 0;
  };
  let result: { kind: SandboxKind; warning?: string } | undefined;
  if (
    (preferred === 'auto' || preferred === 'bwrap') &&
    tryRun(['bwrap', ...bwrapArgs([], '/', []), 'true'])
  ) {
    result = { kind: 'bwrap' };
  } else if ((preferred === 'auto' || preferred === 'unshare') && tryRun([...unshareArgs(), 'true'])) {
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

function usrMerged(name: string): boolean {
  try {
    return lstatSync(`/${name}`).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Largest file a command may write: the per-file cap, or the folder's size when that is smaller. */
function fileLimit(options: SandboxOptions): number {
  return Math.min(MAX_FILE_BYTES, options.diskBytes ?? MAX_FILE_BYTES);
}

/**
 * bwrap arguments up to (not including) the command. `workDir` is bound read-write at /sample, or
 * with `privateBytes` /sample is a fresh tmpfs of that many bytes (the host folder is not used).
 */
function bwrapArgs(
  readOnlyPaths: readonly string[],
  workDir: string | undefined,
  _env: string[],
  privateBytes?: number,
): string[] {
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    '--ro-bind',
    '/etc',
    '/etc',
  ];
  for (const name of ['bin', 'lib', 'lib64', 'lib32', 'sbin']) {
    if (usrMerged(name)) args.push('--symlink', `usr/${name}`, `/${name}`);
    else args.push('--ro-bind-try', `/${name}`, `/${name}`);
  }
  args.push('--dev', '/dev', '--proc', '/proc', '--size', String(TMPFS_BYTES), '--tmpfs', '/tmp');
  for (const path of readOnlyPaths) args.push('--ro-bind', path, path);
  if (privateBytes !== undefined)
    args.push('--size', String(privateBytes), '--tmpfs', SANDBOX_DIR, '--chdir', SANDBOX_DIR);
  else if (workDir && workDir !== '/') args.push('--bind', workDir, SANDBOX_DIR, '--chdir', SANDBOX_DIR);
  return args;
}

function unshareArgs(): string[] {
  return ['unshare', '--user', '--net', '--pid', '--ipc', '--uts', '--fork', '--kill-child'];
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
  /** CPU-time limit in seconds (RLIMIT_CPU); default none. */
  cpuSec?: number;
  /**
   * bwrap only: /sample is a fresh tmpfs of `options.diskBytes` instead of `workDir` (for a command
   * that needs no file from the host, like the Python worker): the folder's size is bounded.
   */
  privateDir?: boolean;
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

const containerNames = new WeakMap<ChildProcess, string>();

/** Starts a sandboxed process (in its own process group) with piped stdio. */
export function spawnSandboxed(command: SandboxCommand): {
  child: ChildProcess;
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
    const child = spawn('docker', [...dockerArgs(command, name, env), ...command.argv], {
      cwd: command.workDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    containerNames.set(child, name);
    return { child, kind };
  }
  const limits = [
    `--data=${command.options.memoryBytes}`,
    `--nproc=${command.options.maxProcesses}`,
    `--fsize=${fileLimit(command.options)}`,
    '--core=0',
  ];
  if (command.cpuSec !== undefined) limits.push(`--cpu=${Math.max(1, Math.ceil(command.cpuSec))}`);
  const argv = ['prlimit', ...limits, '--'];
  if (kind === 'bwrap')
    argv.push(
      'bwrap',
      ...bwrapArgs(
        command.readOnlyPaths ?? [],
        command.workDir,
        [],
        command.privateDir ? (command.options.diskBytes ?? DEFAULT_SANDBOX.diskBytes) : undefined,
      ),
      '--',
    );
  else if (kind === 'unshare') argv.push(...unshareArgs(), '--');
  argv.push(...command.argv);
  const identity = slotIdentity(command.slot);
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: command.workDir,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(identity ? { uid: identity.uid, gid: identity.gid } : {}),
  });
  return { child, kind, ...(warning ? { warning } : {}) };
}

/** Kills a sandboxed process and its whole process group. */
export function killGroup(child: ChildProcess): void {
  const container = containerNames.get(child);
  // A container whose `docker run` already returned is gone (--rm); only a running one needs removing.
  if (container && child.exitCode === null && child.signalCode === null) {
    containerNames.delete(child);
    spawn('docker', ['rm', '-f', container], { stdio: 'ignore' }).on('error', () => {});
  }
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
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
}

/** Runs a sandboxed command to completion, killing its group after `timeoutSec` of wall time. */
export function runSandboxed(
  command: SandboxCommand & { timeoutSec: number; stdin?: string; signal?: AbortSignal },
): Promise<SandboxRunResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const { child, kind, warning } = spawnSandboxed(command);
    const cap = command.options.maxOutputBytes;
    let used = 0;
    let truncated = false;
    const chunks: { out: Buffer[]; err: Buffer[] } = { out: [], err: [] };
    const take = (into: Buffer[]) => (data: Buffer) => {
      if (used >= cap) {
        truncated = true;
        return;
      }
      const room = cap - used;
      const part = data.length > room ? data.subarray(0, room) : data;
      if (data.length > room) truncated = true;
      used += part.length;
      into.push(part);
    };
    child.stdout?.on('data', take(chunks.out));
    child.stderr?.on('data', take(chunks.err));
    child.stdin?.on('error', () => {});
    child.stdin?.end(command.stdin ?? '');
    let timedOut = false;
    let spawnError: string | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, command.timeoutSec * 1000);
    const onAbort = () => killGroup(child);
    command.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      spawnError = error.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      command.signal?.removeEventListener('abort', onAbort);
      // Reap anything left in the group (unsandboxed mode has no pid namespace to do it).
      killGroup(child);
      resolve({
        exitCode: code,
        signal,
        timedOut,
        stdout: Buffer.concat(chunks.out).toString('utf8'),
        stderr: Buffer.concat(chunks.err).toString('utf8'),
        truncated,
        durationSec: (performance.now() - started) / 1000,
        kind,
        ...(warning ? { warning } : {}),
        ...(spawnError ? { spawnError } : {}),
      });
    });
  });
}

/** This process's folder of sample folders (removed at exit when empty). */
export function sampleRoot(): string {
  return join(tmpdir(), 'berth-functional', `p${process.pid}`);
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

/** Hands out slot numbers 0..n-1 so that concurrent runs never share a uid. */
export class SlotPool {
  private readonly free: number[];
  private readonly waiting: ((slot: number) => void)[] = [];
  constructor(size: number, offset = 0) {
    this.free = Array.from({ length: size }, (_, i) => offset + i);
  }
  async acquire(): Promise<number> {
    const slot = this.free.pop();
    if (slot !== undefined) return slot;
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  release(slot: number): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }
}
