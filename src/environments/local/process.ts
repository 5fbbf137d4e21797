/**
 * Runs one command in its own process group with a wall-clock limit that
 * kills the whole group, capturing stdout and stderr (interleaved) to a file
 * with a byte cap and a visible truncation mark.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { execa } from 'execa';
import type { ExecResult } from '../environment.ts';

/** Default cap on captured output: 50 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 50 * 1024 * 1024;

/** Grace period between SIGTERM and SIGKILL of a timed-out group, in milliseconds. */
const KILL_GRACE_MS = 2000;

export interface RunProcessOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Wall-clock limit in seconds. */
  timeoutSec?: number;
  /** Host file receiving stdout and stderr, capped at `maxOutputBytes`. */
  outputFile?: string;
  /** Output cap in bytes (default 50 MiB); later output is dropped and a truncation mark appended. */
  maxOutputBytes?: number;
  /** Standard input content; stdin is empty otherwise. */
  input?: string | Uint8Array;
  signal?: AbortSignal;
  /** Run as this uid/gid (berth must be root). */
  uid?: number;
  gid?: number;
}

/** The text appended when output passed the cap. */
export function truncationMark(cap: number, dropped: number): string {
  return `\n[berth: output truncated at ${cap} bytes; ${dropped} more bytes dropped]\n`;
}

/** Process groups started by runProcess that may still hold processes. */
const activeGroups = new Set<number>();
let exitHookInstalled = false;

/** Kills every group berth started when berth itself exits (e.g. a second Ctrl-C). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of activeGroups) killGroup(pid, 'SIGKILL');
  });
}

/** Sends a signal to a whole process group, ignoring a group that is already gone. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {}
}

/**
 * Runs `argv` (no shell unless argv starts one) as the leader of a new process group.
 * When it exits, any process it left in its group is killed too; on timeout or abort
 * the group gets SIGTERM, then SIGKILL after a grace period.
 * @returns the exit code (null when killed), whether it timed out, the captured output.
 */
export async function runProcess(argv: string[], options: RunProcessOptions): Promise<ExecResult> {
  const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const started = performance.now();
  let file: WriteStream | undefined;
  if (options.outputFile) {
    await mkdir(dirname(options.outputFile), { recursive: true });
    // Written to a temporary name and renamed at the end, so the file is never seen half-written.
    file = createWriteStream(`${options.outputFile}.partial`);
  }
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let dropped = 0;
  const [command, ...args] = argv as [string, ...string[]];
  const child = execa(command, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    detached: true,
    reject: false,
    buffer: false,
    all: true,
    stripFinalNewline: false,
    cleanup: true,
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
  });
  const pid = child.pid;
  installExitHook();
  if (pid !== undefined) activeGroups.add(pid);
  let timedOut = false;
  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = () => {
    killGroup(pid, 'SIGTERM');
    killTimer ??= setTimeout(() => killGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
  };
  const timer =
    options.timeoutSec !== undefined && options.timeoutSec > 0
      ? setTimeout(() => {
          timedOut = true;
          terminate();
        }, options.timeoutSec * 1000)
      : undefined;
  const onAbort = () => {
    aborted = true;
    terminate();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // The leader is gone: whatever it left running in its group must not outlive it
  // (it would also hold the output pipe open).
  child.on('exit', () => killGroup(pid, 'SIGKILL'));
  child.all?.on('data', (chunk: Buffer) => {
    const room = cap - keptBytes;
    if (room <= 0) {
      dropped += chunk.length;
      return;
    }
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    dropped += chunk.length - part.length;
    kept.push(part);
    keptBytes += part.length;
    file?.write(part);
  });
  const result = await child;
  if (pid !== undefined) activeGroups.delete(pid);
  if (timer) clearTimeout(timer);
  if (killTimer) clearTimeout(killTimer);
  options.signal?.removeEventListener('abort', onAbort);
  let output = Buffer.concat(kept).toString('utf8');
  const truncated = dropped > 0;
  if (truncated) {
    const mark = truncationMark(cap, dropped);
    output += mark;
    file?.write(mark);
  }
  if (timedOut) {
    const note = `\n[berth: timed out after ${options.timeoutSec} s; process group killed]\n`;
    output += note;
    file?.write(note);
  }
  if (file && options.outputFile) {
    await new Promise<void>((resolve, reject) =>
      file.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    await rename(`${options.outputFile}.partial`, options.outputFile);
  }
  const failedToStart = result.failed && result.exitCode === undefined && result.signal === undefined;
  if (failedToStart && !timedOut && !aborted) {
    output += `\n[berth: could not start ${command}: ${result.shortMessage ?? result.message}]\n`;
  }
  return {
    exitCode:
      timedOut || aborted ? (result.exitCode ?? null) : (result.exitCode ?? (failedToStart ? 127 : null)),
    ...(result.signal ? { signal: result.signal } : {}),
    timedOut,
    output,
    truncated,
    durationSec: (performance.now() - started) / 1000,
  };
}
