/**
 * Runs one command of a local environment through the sandbox
 * (src/sandbox/): its own process group (and cgroup where there is one), a
 * wall-clock limit that kills the whole group, resource limits, and stdout
 * and stderr (interleaved) captured to a file with a byte cap and a visible
 * truncation mark.
 */
import type { Readable } from 'node:stream';
import { folderFull, folderUsedBytes } from '../../sandbox/capped-folder.ts';
import { type CommandLimits, startCommand } from '../../sandbox/command.ts';
import { DEFAULT_OUTPUT_BYTES, limitsHit, truncationMark } from '../../sandbox/limits.ts';
import { runToEnd } from '../../sandbox/process.ts';
import type { ExecResult } from '../environment.ts';

/** Grace period between SIGTERM and SIGKILL of a timed-out group, in milliseconds. */
const KILL_GRACE_MS = 2000;

/** Limits when a caller gives none (the sandbox's defaults for one command). */
const UNBOUNDED_LIMITS: CommandLimits = {
  processes: 4096,
  memoryBytes: 4096 * 1024 * 1024,
  fileBytes: 10240 * 1024 * 1024,
};

export interface RunProcessOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Wall-clock limit in seconds. */
  timeoutSec?: number;
  /** Host file receiving stdout and stderr, capped at `maxOutputBytes`. */
  outputFile?: string;
  /** Output cap in bytes (default 50 MiB); later output is dropped and a truncation mark appended. */
  maxOutputBytes?: number;
  /** Standard input content, or a stream piped in; stdin is empty otherwise. */
  input?: string | Uint8Array | Readable;
  signal?: AbortSignal;
  /** Run as this uid/gid (berth must be root). */
  uid?: number;
  gid?: number;
  /** Isolation prefix (src/sandbox/isolation.ts) put before `argv`. */
  prefix?: readonly string[];
  /** Resource limits (default: the sandbox's defaults). */
  limits?: CommandLimits;
  /** The capped folder the command writes to: a full one is reported as the `disk` limit. */
  cappedFolder?: string;
}

/**
 * Runs `argv` (no shell unless argv starts one) as the leader of a new process group.
 * When it exits, any process it left in its group is killed too; on timeout or abort
 * the group gets SIGTERM, then SIGKILL after a grace period.
 * @returns the exit code (null when killed), whether it timed out, the captured output, the
 *   limits it ran into.
 */
export async function runProcess(argv: string[], options: RunProcessOptions): Promise<ExecResult> {
  const cap = options.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES;
  const { proc } = startCommand({
    argv,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    cwd: options.cwd,
    env: options.env ?? process.env,
    ...(options.uid !== undefined && options.gid !== undefined
      ? { spawnAs: { uid: options.uid, gid: options.gid } }
      : {}),
    limits: {
      ...(options.limits ?? UNBOUNDED_LIMITS),
      ...(options.timeoutSec !== undefined ? { timeoutSec: options.timeoutSec } : {}),
    },
    stdin: options.input !== undefined ? 'pipe' : 'ignore',
  });
  const timeoutNote = `\n[berth: timed out after ${options.timeoutSec} s; process group killed]\n`;
  const run = await runToEnd(proc, {
    ...(options.timeoutSec !== undefined ? { timeoutSec: options.timeoutSec } : {}),
    graceMs: KILL_GRACE_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
    maxOutputBytes: cap,
    capture: 'interleaved',
    ...(options.outputFile ? { file: options.outputFile } : {}),
    fileTrailer: ({ droppedBytes, timedOut }) =>
      `${droppedBytes > 0 ? truncationMark(cap, droppedBytes) : ''}${timedOut ? timeoutNote : ''}`,
  });
  let output = run.output;
  const truncated = run.droppedBytes > 0;
  if (truncated) output += truncationMark(cap, run.droppedBytes);
  if (run.timedOut) output += timeoutNote;
  const failedToStart = run.spawnError !== undefined;
  if (failedToStart && !run.timedOut && !run.aborted) {
    output += `\n[berth: could not start ${argv[0]}: ${run.spawnError}]\n`;
  }
  const hit = limitsHit({
    exitCode: run.exitCode,
    signal: run.signal,
    ...(run.stats ? { stats: run.stats } : {}),
    diskFull: options.cappedFolder !== undefined && folderFull(options.cappedFolder),
    truncated,
    // The capped folder is a tmpfs: its files count against the memory limit (limitsHit).
    ...(options.cappedFolder !== undefined && run.stats?.oomKills
      ? { writtenBytes: folderUsedBytes(options.cappedFolder) }
      : {}),
    ...(options.limits !== undefined
      ? { memoryLimitBytes: options.limits.groupMemoryBytes ?? options.limits.memoryBytes }
      : {}),
  });
  return {
    exitCode: run.timedOut || run.aborted ? run.exitCode : (run.exitCode ?? (failedToStart ? 127 : null)),
    ...(run.signal ? { signal: run.signal } : {}),
    timedOut: run.timedOut,
    output,
    truncated,
    durationSec: run.durationSec,
    ...(hit.includes('memory') ? { oomKilled: true } : {}),
    ...(hit.length > 0 ? { limitsHit: hit } : {}),
  };
}
