/**
 * The one way berth starts an untrusted process, and the one way it kills
 * one. A process is started as the leader of a new process group (and, when
 * it has one, inside its cgroup); killing it kills the whole group and every
 * process left in the cgroup, including ones that left the group with
 * `setsid`. `runToEnd` runs a command to its end with a wall-clock limit
 * (SIGTERM to the group, SIGKILL after a grace period), an abort signal, and
 * its output captured with a byte cap (interleaved, optionally streamed to a
 * file, or stdout and stderr apart). When the leader exits, whatever it left
 * in its group is killed too. Every group still running when berth exits is
 * killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import type { CgroupStats, CommandGroup } from './cgroup.ts';

/** Sends a signal to a whole process group, ignoring a group that is already gone. */
export function killProcessGroup(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {}
}

/** Groups started here that may still hold processes (killed when berth exits). */
const active = new Set<SandboxProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of active) p.kill();
  });
}

export interface SpawnOptions {
  cwd: string;
  /** The whole environment of the process (nothing of berth's is added). */
  env: Record<string, string | undefined>;
  /** Spawn as this uid/gid (berth must be root). */
  uid?: number;
  gid?: number;
  /** `pipe` (default): write to `child.stdin`; `ignore`: empty. */
  stdin?: 'pipe' | 'ignore';
  /** The cgroup the argv enters (its prefix is already in `argv`); killed and removed with the process. */
  group?: CommandGroup;
  /** Extra clean-up when the process is killed (e.g. removing a container). */
  onKill?: () => void;
}

/** A started process group. */
export class SandboxProcess {
  readonly child: ChildProcess;
  /** Settles when the leader has exited and its stdio closed. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  private killTimer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    argv: readonly string[],
    private readonly options: SpawnOptions,
  ) {
    const [command, ...args] = argv as [string, ...string[]];
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
    this.child.stdin?.on('error', () => {});
    installExitHook();
    active.add(this);
    let spawnError: Error | undefined;
    this.closed = new Promise((resolve) => {
      this.child.on('error', (error) => {
        spawnError = error;
        // A process that never started emits no 'close' of its own on every Node version.
        if (this.child.pid === undefined) resolve({ code: null, signal: null, error });
      });
      this.child.on('close', (code, signal) =>
        resolve({ code, signal, ...(spawnError ? { error: spawnError } : {}) }),
      );
    });
    // The leader is gone: whatever it left running in its group must not outlive it
    // (it would also hold the output pipes open).
    this.child.on('exit', () => killProcessGroup(this.child.pid, 'SIGKILL'));
    void this.closed.then(() => {
      this.finished = true;
      if (this.killTimer) clearTimeout(this.killTimer);
      active.delete(this);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the leader is still running. */
  get running(): boolean {
    return !this.finished && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The cgroup's counters (undefined without a cgroup). */
  stats(): CgroupStats | undefined {
    return this.options.group?.stats();
  }

  /** SIGKILL to the whole process group and every process in the cgroup. */
  kill(): void {
    if (this.running) this.options.onKill?.();
    killProcessGroup(this.child.pid, 'SIGKILL');
    this.options.group?.killAll();
    if (this.child.pid === undefined) return;
    try {
      this.child.kill('SIGKILL');
    } catch {}
  }

  /** SIGTERM to the group, then `kill()` after `graceMs` unless it is gone by then. */
  terminate(graceMs: number): void {
    if (graceMs <= 0) {
      this.kill();
      return;
    }
    killProcessGroup(this.child.pid, 'SIGTERM');
    this.killTimer ??= setTimeout(() => this.kill(), graceMs);
  }

  /** Kills what is left and removes the cgroup (call once the process has closed). */
  async release(): Promise<void> {
    killProcessGroup(this.child.pid, 'SIGKILL');
    await this.options.group?.remove();
  }
}

/** Options of `runToEnd`. */
export interface RunOptions {
  /** Wall-clock limit in seconds. */
  timeoutSec?: number;
  /** Between SIGTERM and SIGKILL at a timeout or abort, in milliseconds (0: SIGKILL at once). */
  graceMs?: number;
  signal?: AbortSignal;
  /** Standard input content, or a stream piped in (closed after it); empty otherwise. */
  input?: string | Uint8Array | Readable;
  /** Cap on the captured output (stdout and stderr together, or each with `capEach`), in bytes. */
  maxOutputBytes: number;
  /** Cap stdout and stderr each at `maxOutputBytes` (capture `separate` only). */
  capEach?: boolean;
  /** `interleaved`: one text in arrival order (and `file`); `separate`: stdout and stderr apart. */
  capture: 'interleaved' | 'separate';
  /** Host file receiving the interleaved output up to the cap (written as `.partial`, renamed at the end). */
  file?: string;
  /** Text appended to `file` (only) after the output, e.g. a truncation mark. */
  fileTrailer?: (outcome: { droppedBytes: number; timedOut: boolean }) => string;
}

/** The end of a command run by `runToEnd`. */
export interface RunOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** The interleaved output (capture `interleaved`), up to the cap. */
  output: string;
  stdout: string;
  stderr: string;
  /** Bytes dropped past the cap (0: nothing was cut). */
  droppedBytes: number;
  /** The same per stream. */
  dropped: { stdout: number; stderr: number };
  durationSec: number;
  /** The process could not start (spawn error). */
  spawnError?: string;
  /** The cgroup's counters at the end (undefined without a cgroup). */
  stats?: CgroupStats;
}

/**
 * Runs a started process to its end (see the module's comment) and releases it.
 * The output file, when asked, holds exactly the kept output (marks are the caller's).
 */
export async function runToEnd(proc: SandboxProcess, options: RunOptions): Promise<RunOutcome> {
  const started = performance.now();
  // Listeners first, so nothing the process writes waits on the output file being made.
  let file: WriteStream | undefined;
  const cap = options.maxOutputBytes;
  const interleaved = options.capture === 'interleaved';
  const each = options.capEach === true && !interleaved;
  const kept: { out: Buffer[]; err: Buffer[] } = { out: [], err: [] };
  const keptBytes = { out: 0, err: 0 };
  const dropped = { stdout: 0, stderr: 0 };
  const take = (into: 'out' | 'err', stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const used = each ? keptBytes[into] : keptBytes.out + keptBytes.err;
    const room = cap - used;
    if (room <= 0) {
      dropped[stream] += chunk.length;
      return;
    }
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    dropped[stream] += chunk.length - part.length;
    kept[into].push(part);
    keptBytes[into] += part.length;
    file?.write(part);
  };
  proc.child.stdout?.on('data', take('out', 'stdout'));
  proc.child.stderr?.on('data', take(interleaved ? 'out' : 'err', 'stderr'));
  const input = options.input;
  if (input instanceof Readable) {
    // A stream that fails closes stdin early: the command sees its input cut short.
    input.on('error', () => proc.child.stdin?.destroy());
    if (proc.child.stdin) input.pipe(proc.child.stdin);
    else input.resume();
  } else if (input !== undefined) proc.child.stdin?.end(input);
  else proc.child.stdin?.end();

  let timedOut = false;
  let aborted = false;
  const grace = options.graceMs ?? 0;
  const timer =
    options.timeoutSec !== undefined && options.timeoutSec > 0
      ? setTimeout(() => {
          timedOut = true;
          proc.terminate(grace);
        }, options.timeoutSec * 1000)
      : undefined;
  const onAbort = () => {
    aborted = true;
    proc.terminate(grace);
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.file) {
    await mkdir(dirname(options.file), { recursive: true }).catch(async (error: unknown) => {
      proc.kill();
      await proc.closed;
      await proc.release();
      throw error;
    });
    const opened = createWriteStream(`${options.file}.partial`);
    // What came before the file was open, then the rest as it comes.
    opened.write(Buffer.concat([...kept.out, ...kept.err]));
    file = opened;
  }
  const end = await proc.closed;
  if (timer) clearTimeout(timer);
  options.signal?.removeEventListener('abort', onAbort);
  const stats = proc.stats();
  await proc.release();
  if (file && options.file) {
    const f = file;
    const trailer = options.fileTrailer?.({ droppedBytes: dropped.stdout + dropped.stderr, timedOut });
    if (trailer) f.write(trailer);
    await new Promise<void>((resolve, reject) =>
      f.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    await rename(`${options.file}.partial`, options.file);
  }
  const out = Buffer.concat(kept.out).toString('utf8');
  return {
    exitCode: end.code,
    signal: end.signal,
    timedOut,
    aborted,
    output: interleaved ? out : '',
    stdout: interleaved ? '' : out,
    stderr: interleaved ? '' : Buffer.concat(kept.err).toString('utf8'),
    droppedBytes: dropped.stdout + dropped.stderr,
    dropped,
    durationSec: (performance.now() - started) / 1000,
    ...(end.error ? { spawnError: end.error.message } : {}),
    ...(stats ? { stats } : {}),
  };
}
