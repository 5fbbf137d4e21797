/**
 * Resource limits of a trial's container (src/sandbox/limits.ts gives the values):
 *
 * - processes: `PidsLimit` (a fork bomb stops there; the default keeps `-n`
 *   containers at their limit within half of the host's pids);
 * - memory: `Memory` = `MemorySwap` (no swap); an OOM kill is counted from the
 *   container's cgroup (`memory.oom_control` / `memory.events`) where this
 *   host can read it, else from the engine's `oom` events;
 * - CPU cores: `NanoCpus`, clamped to the engine's CPU count;
 * - CPU time and file size: `ulimit -t` / `ulimit -f` in front of every
 *   command (hard limits, which the container cannot raise without
 *   CAP_SYS_RESOURCE): SIGXCPU and SIGXFSZ as locally;
 * - writable size: `StorageOpt size` where the engine's storage driver takes
 *   it (overlay2 on xfs with pquota, btrfs, zfs); elsewhere (overlay2 on
 *   ext4) the container's writable layer is measured (`SizeRw`) every 10 s
 *   while a command runs and at the end of each phase, and a command is
 *   killed when it passed the limit, so a burst between two checks can pass it.
 *
 * A fork refused at the pids limit is counted from the container's
 * `pids.events` where this host can read it.
 */
import type Docker from 'dockerode';
import { type CgroupStats, cgroupCountersOf } from '../../sandbox/cgroup.ts';
import {
  cpuSecondsFor,
  type LimitName,
  type LimitsRecord,
  limitsHit,
  type ResourceLimits,
} from '../../sandbox/limits.ts';
import type { EnvironmentLimits } from '../environment.ts';

/** How often the writable layer is measured while a command runs, in milliseconds. */
export const DISK_WATCH_MS = 10_000;

const storageOptRefused = new WeakSet<Docker>();

/** Whether to ask the engine for `StorageOpt size` (its storage driver can enforce it). */
export function storageOptWorth(
  docker: Docker,
  info: { Driver?: string; DriverStatus?: string[][] },
): boolean {
  if (storageOptRefused.has(docker)) return false;
  const backing = info.DriverStatus?.find(([key]) => key === 'Backing Filesystem')?.[1];
  if (info.Driver === 'overlay2') return backing === 'xfs';
  return ['btrfs', 'zfs', 'devicemapper', 'windowsfilter'].includes(info.Driver ?? '');
}

/** Remembers that the engine refused `StorageOpt` (asked once per engine). */
export function refuseStorageOpt(docker: Docker): void {
  storageOptRefused.add(docker);
}

/** Whether a create error is the engine refusing `StorageOpt`. */
export function isStorageOptError(error: unknown): boolean {
  return /storage-?opt|quota|size option/i.test(String((error as Error)?.message ?? error));
}

/** The limits of one container, what its commands ran into, and the prefix every command gets. */
export class ContainerLimits implements EnvironmentLimits {
  private readonly hits = new Set<LimitName>();
  private counters: (() => CgroupStats) | undefined;
  private taken: CgroupStats = { pidsRefused: 0, oomKills: 0 };
  private oomEventsTaken = 0;

  constructor(
    private readonly container: Docker.Container,
    readonly limits: ResourceLimits,
    readonly record: LimitsRecord,
    /** The engine's `oom` events for the container so far (when its cgroup is not readable here). */
    private readonly oomEvents: () => number,
  ) {}

  /** Finds the container's cgroup on this host (after start); a remote engine's is not visible. */
  async attach(): Promise<void> {
    const pid = (await this.container.inspect()).State?.Pid;
    this.counters = pid ? cgroupCountersOf(pid) : undefined;
    if (!this.counters)
      this.record.notes.push('container cgroup not readable here: fork refusals are not seen');
  }

  /**
   * After the container was killed and started again (`killStrayProcesses`): its cgroup is a
   * new one, with counters from zero; what was taken so far is kept as hits already.
   */
  async afterRestart(): Promise<void> {
    this.taken = { pidsRefused: 0, oomKills: 0 };
    const pid = (await this.container.inspect()).State?.Pid;
    this.counters = pid ? cgroupCountersOf(pid) : undefined;
  }

  /** The cgroup's counters now (undefined when not readable). */
  snapshot(): CgroupStats | undefined {
    return this.counters?.();
  }

  /** `ulimit` commands (POSIX sh) for one command with this wall-clock limit. */
  ulimitPrefix(timeoutSec?: number): string {
    const cpu = this.limits.cpuSec ?? cpuSecondsFor(timeoutSec, this.limits.cpus);
    const blocks = Math.max(1, Math.ceil(this.limits.fileBytes / 512));
    return `ulimit -H -t ${cpu + 1} 2>/dev/null; ulimit -S -t ${cpu} 2>/dev/null; ulimit -f ${blocks} 2>/dev/null; `;
  }

  /** Whether the writable layer holds more than the storage limit now (`SizeRw`; slow on big layers). */
  async overDisk(): Promise<boolean> {
    if (this.record.enforced_by.disk !== 'watch') return false;
    try {
      const inspected: unknown = await this.container.inspect({ size: true } as never);
      const size = (inspected as { SizeRw?: number }).SizeRw;
      return size !== undefined && size > this.limits.diskBytes;
    } catch {
      return false;
    }
  }

  /** Measures the writable layer every 10 s while a command runs; `onOver` when it passed the limit. */
  watchDisk(onOver: () => void): () => void {
    if (this.record.enforced_by.disk !== 'watch') return () => {};
    let busy = false;
    const timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      if (await this.overDisk()) onOver();
      busy = false;
    }, DISK_WATCH_MS);
    return () => clearInterval(timer);
  }

  /** The limits one command ran into (noted for `takeHits`). */
  commandHits(outcome: {
    before: CgroupStats | undefined;
    exitCode: number | null;
    oomKilled?: boolean;
    diskFull: boolean;
    truncated: boolean;
  }): LimitName[] {
    const after = this.snapshot();
    const stats =
      outcome.before && after
        ? {
            pidsRefused: after.pidsRefused - outcome.before.pidsRefused,
            oomKills: Math.max(after.oomKills - outcome.before.oomKills, outcome.oomKilled ? 1 : 0),
          }
        : { pidsRefused: 0, oomKills: outcome.oomKilled ? 1 : 0 };
    const hit = limitsHit({
      exitCode: outcome.exitCode,
      stats,
      diskFull: outcome.diskFull,
      truncated: outcome.truncated,
    });
    for (const h of hit) this.hits.add(h);
    return hit;
  }

  async takeHits(): Promise<LimitName[]> {
    const now = this.snapshot();
    if (now) {
      if (now.pidsRefused > this.taken.pidsRefused) this.hits.add('processes');
      if (now.oomKills > this.taken.oomKills) this.hits.add('memory');
      this.taken = now;
    } else if (this.oomEvents() > this.oomEventsTaken) {
      this.hits.add('memory');
    }
    this.oomEventsTaken = this.oomEvents();
    if (await this.overDisk()) this.hits.add('disk');
    const out = [...this.hits];
    this.hits.clear();
    return out;
  }
}
