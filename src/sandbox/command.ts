/**
 * Starts one untrusted command with its limits and its isolation:
 *
 *   [enter its cgroup (and set rlimits there)] [prlimit rlimits] [isolation prefix] command
 *
 * The cgroup (cgroup.ts) bounds processes and memory of the whole command and
 * lets berth kill everything in it; where there is none, RLIMIT_NPROC and
 * RLIMIT_DATA stand in. RLIMIT_FSIZE (largest file) and RLIMIT_CPU (CPU
 * seconds per process) always apply. The isolation prefix comes from
 * isolation.ts (host or minimal view).
 */
import { CommandGroup } from './cgroup.ts';
import type { SandboxIdentity } from './identity.ts';
import { dropTo } from './isolation.ts';
import { cpuSecondsFor, type LimitEnforcement, prlimitPrefix, type Rlimits, ulimitScript } from './limits.ts';
import { SandboxProcess } from './process.ts';

/** Limits of one command. Sizes in bytes, times in seconds. */
export interface CommandLimits {
  processes: number;
  memoryBytes: number;
  /** CPU cores (cgroup quota); undefined: none. */
  cpus?: number;
  /** Largest file a process may write. */
  fileBytes: number;
  /** CPU seconds per process; default from the wall-clock limit (limits.ts `cpuSecondsFor`). */
  cpuSec?: number;
  /** The command's wall-clock limit, for the default CPU time. */
  timeoutSec?: number;
  /**
   * Apply RLIMIT_NPROC and RLIMIT_DATA even inside a cgroup (function-level samples, whose
   * uid is their own and whose programs are small); default only where there is no cgroup.
   */
  alwaysRlimits?: boolean;
  /** No cgroup even where cgroups work (default false). */
  noCgroup?: boolean;
  /** The cgroup's memory limit when it differs from `memoryBytes` (the per-process RLIMIT_DATA). */
  groupMemoryBytes?: number;
}

export interface CommandSpec {
  /** The command as the isolation prefix runs it. */
  argv: readonly string[];
  /** Isolation prefix (isolation.ts), empty for none. */
  prefix?: readonly string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** The uid/gid to spawn as (the minimal view runs bwrap as the slot's uid). */
  spawnAs?: SandboxIdentity;
  limits: CommandLimits;
  stdin?: 'pipe' | 'ignore';
  /** Extra clean-up when the process is killed (e.g. removing a container). */
  onKill?: () => void;
}

/** A started command and how its limits are enforced. */
export interface StartedCommand {
  proc: SandboxProcess;
  enforcement: Pick<LimitEnforcement, 'processes' | 'memory' | 'cpus'>;
}

/** Starts `spec` (see the module's comment). */
export function startCommand(spec: CommandSpec): StartedCommand {
  const l = spec.limits;
  const group = l.noCgroup
    ? undefined
    : CommandGroup.create({
        processes: l.processes,
        memoryBytes: l.groupMemoryBytes ?? l.memoryBytes,
        ...(l.cpus !== undefined ? { cpus: l.cpus } : {}),
      });
  const rlimitsToo = !group || l.alwaysRlimits === true;
  const r: Rlimits = {
    fsize: l.fileBytes,
    cpu: l.cpuSec ?? cpuSecondsFor(l.timeoutSec, l.cpus),
    ...(rlimitsToo ? { nproc: l.processes, data: l.memoryBytes } : {}),
  };
  // Only root may move a process into a group: with a group, the command starts as root and
  // drops to its uid (setpriv) once inside.
  const drop = group && spec.spawnAs ? dropTo(spec.spawnAs) : [];
  // With a group, its root shell sets the rlimits it can (file size, CPU time, core files:
  // inherited through setpriv and exec) and no prlimit program runs: one program fewer for
  // every command. RLIMIT_NPROC and RLIMIT_DATA still go through prlimit, after the drop.
  const inShell = group ? ulimitScript(r) : undefined;
  const argv = [
    ...(group ? group.enterPrefix(inShell) : []),
    ...drop,
    ...(inShell ? [] : prlimitPrefix(r)),
    ...(spec.prefix ?? []),
    ...spec.argv,
  ];
  const spawnAs = group ? undefined : spec.spawnAs;
  const proc = new SandboxProcess(argv, {
    cwd: spec.cwd,
    env: spec.env,
    ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
    ...(spec.stdin ? { stdin: spec.stdin } : {}),
    ...(group ? { group } : {}),
    ...(spec.onKill ? { onKill: spec.onKill } : {}),
  });
  const by = group ? (group.version === 'v2' ? 'cgroup-v2' : 'cgroup-v1') : 'rlimit';
  return {
    proc,
    enforcement: {
      processes: by,
      memory: by,
      cpus: l.cpus === undefined || !group?.hasCpu ? 'none' : by === 'rlimit' ? 'none' : by,
    },
  };
}
