/**
 * Resource limits of untrusted commands: what they are, their defaults, how a
 * task and the command line set them, and how each is enforced on this
 * machine.
 *
 * | limit | default | set by | enforced (local) | enforced (Docker) |
 * |---|---|---|---|---|
 * | processes | 4096, at most pid_max / (2 × trials at once) | config `docker.pids_limit` | cgroup `pids.max`, else RLIMIT_NPROC of the trial's uid | `PidsLimit` |
 * | memory | 4096 MiB | `memory_mb`, `--override-memory-mb` | cgroup memory limit, else RLIMIT_DATA per process | `Memory` = `MemorySwap` |
 * | CPU cores | none | `cpus`, `--override-cpus` | cgroup CPU quota (where the cpu controller is there) | `NanoCpus` |
 * | CPU time | the command's timeout × its cores (6 h without a timeout) | (follows the timeouts) | RLIMIT_CPU per process | `ulimit -t` per command |
 * | file size | the storage size | `storage_mb`, `--override-storage-mb` | RLIMIT_FSIZE | `ulimit -f` per command |
 * | writable folders | 10240 MiB | `storage_mb`, `--override-storage-mb` | size-capped tmpfs (trial folder as root; `/tmp`, home) | see docs/security.md |
 * | output | 50 MiB local, 10 MiB Docker per command | (fixed) | capped capture | capped capture |
 *
 * Sources: Harbor's `[environment]` fields (`cpus`, `memory_mb`, `storage_mb`,
 * legacy `memory`/`storage`) and its `--override-*` flags.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { CgroupStats } from './cgroup.ts';

/** The limits of one environment's commands. Sizes in bytes, times in seconds. */
export interface ResourceLimits {
  /** Processes and threads at once. */
  processes: number;
  /** Memory of all the command's processes together (per process where only rlimits apply). */
  memoryBytes: number;
  /** CPU cores (a quota); undefined: none. */
  cpus?: number;
  /** Size of each writable folder. */
  diskBytes: number;
  /** Largest file a process may write (default: `diskBytes`). */
  fileBytes: number;
  /** CPU seconds per process; undefined: from each command's wall-clock limit. */
  cpuSec?: number;
  /** Captured output per command; undefined: the environment's own cap. */
  outputBytes?: number;
}

/**
 * Limits asked for on the command line or in a job (the `TrialSpec`'s `limits`), each
 * replacing the task's value and the default. Sizes in bytes, times in seconds.
 */
export interface LimitRequest {
  /** Processes (threads) at once, per environment (config `docker.pids_limit`). */
  processes?: number;
  /** Memory in bytes (`--override-memory-mb`). */
  memoryBytes?: number;
  /** CPU cores (`--override-cpus`). */
  cpus?: number;
  /** Size of the writable folders in bytes (`--override-storage-mb`). */
  writableBytes?: number;
  /** Largest file a command may write, in bytes (default: the writable size). */
  fileSizeBytes?: number;
  /** CPU seconds per process (default: from each command's timeout). */
  cpuSec?: number;
  /** Captured output per command in bytes (host side). */
  outputBytes?: number;
}

/** What a task asks for: Harbor's `[environment]` `cpus`, `memory_mb`, `storage_mb`. */
export interface TaskResources {
  cpus?: number;
  memoryMb?: number;
  storageMb?: number;
}

/**
 * Captured output per command when neither the caller nor the limits say: 50 MiB, the same for
 * every environment (local and containers).
 */
export const DEFAULT_OUTPUT_BYTES = 50 * 1024 * 1024;

/** The visible mark that ends output cut at `cap` bytes (every environment writes this one). */
export function truncationMark(cap: number, dropped: number): string {
  return `\n[berth: output truncated at ${cap} bytes; ${dropped} more bytes dropped]\n`;
}

/** A limit a command ran into. */
export type LimitName = 'processes' | 'memory' | 'cpu-time' | 'file-size' | 'disk' | 'output';

/** How each limit is enforced here (recorded in results). */
export interface LimitEnforcement {
  processes: 'cgroup-v2' | 'cgroup-v1' | 'rlimit' | 'docker' | 'none';
  memory: 'cgroup-v2' | 'cgroup-v1' | 'rlimit' | 'docker';
  cpus: 'cgroup-v2' | 'cgroup-v1' | 'docker' | 'none';
  cpu_time: 'rlimit';
  file_size: 'rlimit';
  /** `tmpfs`: size-capped; `storage-opt`: Docker's per-container quota; `watch`: measured and killed past it. */
  disk: 'tmpfs' | 'storage-opt' | 'watch' | 'none';
}

/** What a trial records about its limits (`berth.limits` in result.json). */
export interface LimitsRecord {
  processes: number;
  memory_bytes: number;
  cpus: number | null;
  disk_bytes: number;
  enforced_by: LimitEnforcement;
  /** What could not be enforced as asked. */
  notes: string[];
}

export const MiB = 1024 * 1024;

/** Default limits of an untrusted command when the task and the command line say nothing. */
export const DEFAULT_LIMITS = {
  processes: 4096,
  memoryBytes: 4096 * MiB,
  diskBytes: 10240 * MiB,
} as const;

/** CPU seconds per process for a command without a wall-clock limit. */
export const DEFAULT_CPU_SEC = 6 * 3600;

/** The kernel's pid_max (the most processes and threads the host can have), or 32768 when unknown. */
export function hostPidMax(): number {
  try {
    const n = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
    return n > 0 ? n : 32768;
  } catch {
    return 32768;
  }
}

/**
 * The process limit of one environment when `concurrency` run at once: `wanted`, at most
 * pid_max / (2 × concurrency), so that every trial at its limit together still leaves half of
 * the host's pids free (at least 64).
 */
export function processBudget(wanted: number, concurrency: number): number {
  const share = Math.floor(hostPidMax() / (2 * Math.max(1, concurrency)));
  return Math.max(64, Math.min(wanted, share));
}

/**
 * The limits of a trial's environment: the request's (command line) values, else the task's,
 * else the defaults; the process limit within the host's budget for `concurrency` trials.
 */
export function resolveLimits(
  task: TaskResources = {},
  request: LimitRequest = {},
  concurrency = 1,
): ResourceLimits {
  const cpus = request.cpus ?? task.cpus;
  const diskBytes =
    request.writableBytes ?? (task.storageMb !== undefined ? task.storageMb * MiB : DEFAULT_LIMITS.diskBytes);
  return {
    processes: processBudget(request.processes ?? DEFAULT_LIMITS.processes, concurrency),
    memoryBytes:
      request.memoryBytes ?? (task.memoryMb !== undefined ? task.memoryMb * MiB : DEFAULT_LIMITS.memoryBytes),
    diskBytes,
    fileBytes: Math.min(request.fileSizeBytes ?? diskBytes, diskBytes),
    ...(cpus !== undefined ? { cpus } : {}),
    ...(request.cpuSec !== undefined ? { cpuSec: request.cpuSec } : {}),
    ...(request.outputBytes !== undefined ? { outputBytes: request.outputBytes } : {}),
  };
}

/** The resources an environment spec asks for (its `cpus`, `memoryMb`, `storageMb`, where it has them). */
export function taskResources(spec: object): TaskResources {
  const r = spec as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && v > 0 ? v : undefined);
  const cpus = num(r.cpus);
  const memoryMb = num(r.memoryMb);
  const storageMb = num(r.storageMb);
  return {
    ...(cpus !== undefined ? { cpus } : {}),
    ...(memoryMb !== undefined ? { memoryMb } : {}),
    ...(storageMb !== undefined ? { storageMb } : {}),
  };
}

/** CPU seconds per process for a command with this wall-clock limit (undefined: none) and cores. */
export function cpuSecondsFor(timeoutSec: number | undefined, cpus?: number): number {
  if (timeoutSec === undefined || !(timeoutSec > 0)) return DEFAULT_CPU_SEC;
  const cores = cpus ?? availableParallelism();
  return Math.max(1, Math.ceil(timeoutSec * Math.max(1, cores)));
}

/** The rlimits applied to a command, with `prlimit` (util-linux) or the cgroup step's `ulimit`s. */
export interface Rlimits {
  /** RLIMIT_NPROC (binds only for a non-root uid). */
  nproc?: number;
  /** RLIMIT_DATA in bytes. */
  data?: number;
  /** RLIMIT_FSIZE in bytes. */
  fsize?: number;
  /** RLIMIT_CPU in seconds (soft; the hard limit is one second later, so SIGXCPU comes first). */
  cpu?: number;
}

/**
 * The same limits as shell lines (the `ulimit` builtin: `-f` in 512-byte blocks, as POSIX and
 * dash, bash as `sh` and BusyBox count it), for a shell that runs before the command anyway (the
 * cgroup step's root `sh`): one program fewer per command than `prlimit`. Undefined where the
 * builtin cannot say the same thing: RLIMIT_NPROC or RLIMIT_DATA (`ulimit` spells them
 * differently from shell to shell), or a file size that is not a whole number of blocks; the
 * caller then uses {@link prlimitPrefix}.
 */
export function ulimitScript(r: Rlimits): string | undefined {
  if (r.nproc !== undefined || r.data !== undefined) return undefined;
  const lines = ['ulimit -c 0'];
  if (r.fsize !== undefined) {
    const bytes = Math.floor(r.fsize);
    if (bytes < 0 || bytes % 512 !== 0) return undefined;
    lines.push(`ulimit -f ${bytes / 512}`);
  }
  if (r.cpu !== undefined) {
    // Both limits first (hard one second later), then the soft one, as prlimit's `soft:hard`.
    const soft = Math.max(1, Math.ceil(r.cpu));
    lines.push(`ulimit -t ${soft + 1}`, `ulimit -S -t ${soft}`);
  }
  return lines.join(' && ');
}

/** `prlimit` argv prefix applying `r` (and no core files), ending with `--`. */
export function prlimitPrefix(r: Rlimits): string[] {
  const args = ['prlimit', '--core=0'];
  if (r.data !== undefined) args.push(`--data=${Math.floor(r.data)}`);
  if (r.nproc !== undefined) args.push(`--nproc=${Math.floor(r.nproc)}`);
  if (r.fsize !== undefined) args.push(`--fsize=${Math.floor(r.fsize)}`);
  if (r.cpu !== undefined) {
    const soft = Math.max(1, Math.ceil(r.cpu));
    args.push(`--cpu=${soft}:${soft + 1}`);
  }
  args.push('--');
  return args;
}

const SIGXCPU = 24;
const SIGXFSZ = 25;

/** Processes at once from which a memory-limit kill is a fork bomb's, when each holds little. */
export const FORK_BOMB_PROCESSES = 64;
/**
 * Most memory per process (peak memory / peak processes) of a fork bomb's kill, in bytes: a
 * forked Python child holds about 0.9 MiB of its own (154 of them in 128 MiB, measured here).
 */
export const FORK_BOMB_BYTES_PER_PROCESS = 2 * 1024 * 1024;

/**
 * What a memory-limit kill came from. Writable folders that live in memory (the local sandbox's
 * size-capped tmpfs) are charged to the command's memory: a disk filler is killed for memory
 * when the memory limit is below the storage size (the defaults: 4096 MiB and 10240 MiB). So:
 * - files holding at least half the memory limit in the writable folder: the `disk` limit;
 * - at least `FORK_BOMB_PROCESSES` processes at once holding at most
 *   `FORK_BOMB_BYTES_PER_PROCESS` each (the cgroup's peaks): a fork bomb, the `processes` limit;
 * - else the `memory` limit.
 */
function memoryKillCause(outcome: {
  stats?: CgroupStats;
  writtenBytes?: number;
  memoryLimitBytes?: number;
}): LimitName {
  const { stats, writtenBytes, memoryLimitBytes } = outcome;
  if (writtenBytes !== undefined && memoryLimitBytes !== undefined && writtenBytes >= memoryLimitBytes / 2)
    return 'disk';
  const processes = stats?.peakProcesses;
  const memory = stats?.peakMemoryBytes;
  if (
    processes !== undefined &&
    memory !== undefined &&
    processes >= FORK_BOMB_PROCESSES &&
    memory / processes <= FORK_BOMB_BYTES_PER_PROCESS
  )
    return 'processes';
  return 'memory';
}

/**
 * The limits a finished command ran into, from its cgroup's counters, the signal that ended it
 * (or a shell's 128+signal exit code), whether its writable folder filled up and whether its
 * output was cut. A memory-limit kill is named for its cause where the sandbox can tell it
 * (`memoryKillCause`: the files of a disk filler, a fork bomb's processes).
 */
export function limitsHit(outcome: {
  exitCode: number | null;
  signal?: string | null;
  stats?: CgroupStats;
  diskFull?: boolean;
  truncated?: boolean;
  /** Bytes held by the command's size-capped writable folder (in memory) after it ended. */
  writtenBytes?: number;
  /** The command's memory limit in bytes. */
  memoryLimitBytes?: number;
}): LimitName[] {
  const hit: LimitName[] = [];
  if ((outcome.stats?.pidsRefused ?? 0) > 0) hit.push('processes');
  if ((outcome.stats?.oomKills ?? 0) > 0) {
    const cause = memoryKillCause(outcome);
    if (!hit.includes(cause)) hit.push(cause);
  }
  if (outcome.signal === 'SIGXCPU' || outcome.exitCode === 128 + SIGXCPU) hit.push('cpu-time');
  if (outcome.signal === 'SIGXFSZ' || outcome.exitCode === 128 + SIGXFSZ) hit.push('file-size');
  if (outcome.diskFull && !hit.includes('disk')) hit.push('disk');
  if (outcome.truncated) hit.push('output');
  return hit;
}
