/**
 * Control groups for untrusted commands: each command runs in a group of its
 * own with a process limit (`pids.max`), a memory limit and optionally a CPU
 * quota; afterwards the group says whether a fork was refused at the limit or
 * the kernel killed a process for memory, and every process still in it can
 * be killed (frozen first where the freezer is there), even ones that left
 * the command's process group.
 *
 * Where the groups live, in order of preference:
 * - **cgroup v2**, when berth's own cgroup hands `pids` and `memory` down to
 *   its children (its `cgroup.subtree_control` lists them, e.g. the root of a
 *   v2 host as root, or a delegated subtree an administrator prepared);
 * - **cgroup v1** (berth as root, the `pids` and `memory` hierarchies
 *   mounted and writable), `cpu` and `freezer` when mounted too;
 * - none: the caller falls back to rlimits (limits.ts).
 *
 * Groups are made under berth's own cgroup of each hierarchy (berth never
 * moves a process out of the group it was started in, so whoever bounds berth
 * bounds its sandboxes too), one folder `berth-<pid>-<start time>-c<n>` per
 * command, removed when the command ends; folders whose berth process is gone
 * (killed mid-command) are removed at the next probe.
 * `BERTH_CGROUPS=0` turns groups off.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRoot, processAlive } from './identity.ts';

export type CgroupVersion = 'v2' | 'v1';
type Controller = 'pids' | 'memory' | 'cpu' | 'freezer';

export interface CgroupSupport {
  /** Which cgroup version berth uses, or undefined when it uses none. */
  version?: CgroupVersion;
  /** berth's own cgroup folder per controller, under which it makes its groups (one folder on v2). */
  dirs: Partial<Record<Controller, string>>;
  /** Why cgroups are not used, or what is missing (for the record). */
  notes: string[];
}

/** Limits one group applies. */
export interface CgroupLimits {
  processes: number;
  memoryBytes: number;
  /** CPU cores (quota per 100 ms period); undefined: no quota. */
  cpus?: number;
}

/** What a group saw, read when its command has ended. */
export interface CgroupStats {
  /** Forks refused because the process limit was reached. */
  pidsRefused: number;
  /** Processes the kernel killed for the memory limit. */
  oomKills: number;
  /** Most memory in use at once, in bytes (when the kernel tells). */
  peakMemoryBytes?: number;
  /** Most processes at once (when the kernel tells). */
  peakProcesses?: number;
}

/** `berth-<pid>-<start time in clock ticks>`: unique per berth process, even after the pid is reused. */
export function ownerTag(pid = process.pid): string | undefined {
  if (pid === process.pid && myTag) return myTag;
  const start = processStartTime(pid);
  const tag = start === undefined ? undefined : `berth-${pid}-${start}`;
  if (pid === process.pid) myTag = tag;
  return tag;
}
let myTag: string | undefined;

/**
 * The start time of a process (field 22 of `/proc/<pid>/stat`, clock ticks since boot),
 * or undefined where /proc is absent or the process is gone. With the pid it names one
 * process for good: a pid reused by another process has another start time.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the owner named by a `berth-<pid>-<start>` tag (maybe followed by `-<more>`) is still running. */
export function ownerAlive(tag: string): boolean {
  const m = /^berth-(\d+)-(\d+)(-.*)?$/.exec(tag);
  if (!m) return true;
  const pid = Number(m[1]);
  return processAlive(pid) && processStartTime(pid) === m[2];
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** A `key value` line of a flat-keyed cgroup file (`pids.events`, `memory.events`, `memory.oom_control`). */
function keyed(path: string, key: string): number {
  const text = read(path);
  const m = text && new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

interface Mount {
  point: string;
  fstype: string;
  superOptions: string[];
  /** The cgroup path at the mount's root (`/` unless the mount is a subtree). */
  root: string;
}

function cgroupMounts(): Mount[] {
  const text = read('/proc/self/mountinfo') ?? '';
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fstype, , superOptions] = right.split(' ');
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue;
    out.push({
      point: (fields[4] ?? '').replace(/\\040/g, ' '),
      fstype,
      superOptions: (superOptions ?? '').split(','),
      root: fields[3] ?? '/',
    });
  }
  return out;
}

/** berth's own cgroup path per hierarchy: `0` (v2) or the v1 controllers list. */
function ownCgroups(): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (m) map.set(m[1] === '0' && m[2] === '' ? '0' : (m[2] as string), m[3] as string);
  }
  return map;
}

/** The folder of berth's own cgroup in a mount (undefined when the mount does not hold it). */
function ownFolder(mount: Mount, own: string): string | undefined {
  const root = mount.root === '/' ? '' : mount.root;
  if (root && own !== root && !own.startsWith(`${root}/`)) return undefined;
  return join(mount.point, own.slice(root.length));
}

/** Removes the folders of berth processes that are gone (killing what is left in them). */
function removeStale(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('berth-') || ownerAlive(name)) continue;
    removeTreeSync(join(parent, name));
  }
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function subfolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/** One attempt to remove an (emptied) group folder: true when it is gone. */
function tryRemove(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    killListed(dir);
    return false;
  }
}

/** Kills every process in a group folder and its subfolders, then removes them (blocking; exit and stale clean-up). */
function removeTreeSync(dir: string): void {
  for (const child of subfolders(dir)) removeTreeSync(child);
  killListed(dir);
  for (let i = 0; i < 50 && !tryRemove(dir); i++) sleepSync(10);
}

/** The same without blocking the event loop (up to about a second for the folder to empty). */
async function removeTree(dir: string): Promise<void> {
  for (const child of subfolders(dir)) await removeTree(child);
  killListed(dir);
  for (let i = 0; i < 100 && !tryRemove(dir); i++) await sleep(10);
}

/** SIGKILL to every pid listed in a group's `cgroup.procs`; returns how many were listed. */
function killListed(dir: string): number {
  const pids = (read(join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  return pids.length;
}

/**
 * The cgroup folders (on this host) of another process, e.g. a container's first process, and
 * a reader of their counters: forks refused at the process limit and OOM kills so far.
 * Undefined when the process's groups are not visible here (a remote Docker engine).
 */
export function cgroupCountersOf(pid: number): (() => CgroupStats) | undefined {
  const lines = read(`/proc/${pid}/cgroup`);
  if (!lines) return undefined;
  const theirs = new Map<string, string>();
  for (const line of lines.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (m) theirs.set(m[1] === '0' && m[2] === '' ? '0' : (m[2] as string), m[3] as string);
  }
  const mounts = cgroupMounts();
  const folderOf = (controller: 'pids' | 'memory'): { dir: string; v2: boolean } | undefined => {
    const key = [...theirs.keys()].find((k) => k.split(',').includes(controller));
    const v1 = mounts.find((m) => m.fstype === 'cgroup' && m.superOptions.includes(controller));
    if (key !== undefined && v1) {
      const dir = ownFolder(v1, theirs.get(key) as string);
      return dir ? { dir, v2: false } : undefined;
    }
    const v2 = mounts.find((m) => m.fstype === 'cgroup2');
    const path = theirs.get('0');
    const dir = v2 && path !== undefined ? ownFolder(v2, path) : undefined;
    return dir ? { dir, v2: true } : undefined;
  };
  const pids = folderOf('pids');
  const memory = folderOf('memory');
  if (!pids && !memory) return undefined;
  return () => ({
    pidsRefused: pids ? keyed(join(pids.dir, 'pids.events'), 'max') : 0,
    oomKills: memory
      ? keyed(join(memory.dir, memory.v2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill')
      : 0,
  });
}

let support: CgroupSupport | undefined;

/** Whether berth can make a group under `folder` (tried with a probe folder, removed at once). */
function writable(folder: string, tag: string): boolean {
  const probe = join(folder, `${tag}-probe`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

function probeV2(mounts: Mount[], own: Map<string, string>, tag: string): CgroupSupport | undefined {
  const path = own.get('0');
  const mount = mounts.find((m) => m.fstype === 'cgroup2');
  if (path === undefined || !mount) return undefined;
  const folder = ownFolder(mount, path);
  if (!folder) return undefined;
  const subtree = (read(join(folder, 'cgroup.subtree_control')) ?? '').trim().split(/\s+/);
  if (!subtree.includes('pids') || !subtree.includes('memory')) return undefined;
  removeStale(folder);
  if (!writable(folder, tag)) return undefined;
  const dirs: CgroupSupport['dirs'] = { pids: folder, memory: folder, freezer: folder };
  if (subtree.includes('cpu')) dirs.cpu = folder;
  return { version: 'v2', dirs, notes: [] };
}

function probeV1(mounts: Mount[], own: Map<string, string>, tag: string): CgroupSupport {
  const notes: string[] = [];
  if (!isRoot) return { dirs: {}, notes: ['cgroup v1 needs root'] };
  const dirs: CgroupSupport['dirs'] = {};
  for (const controller of ['pids', 'memory', 'cpu', 'freezer'] as const) {
    const mount = mounts.find((m) => m.fstype === 'cgroup' && m.superOptions.includes(controller));
    if (!mount) continue;
    const key = [...own.keys()].find((k) => k.split(',').includes(controller));
    const path = key === undefined ? undefined : own.get(key);
    const folder = path === undefined ? undefined : ownFolder(mount, path);
    if (!folder) continue;
    removeStale(folder);
    if (writable(folder, tag)) dirs[controller] = folder;
    else notes.push(`cgroup v1 ${controller}: ${folder} is not writable`);
  }
  if (!dirs.pids || !dirs.memory)
    return { dirs: {}, notes: [...notes, 'cgroup v1: no usable pids and memory hierarchies'] };
  return { version: 'v1', dirs, notes };
}

/** Which cgroups berth can use here (probed once per process; removes what dead berth processes left). */
export function cgroupSupport(): CgroupSupport {
  if (support) return support;
  if (process.env.BERTH_CGROUPS === '0') {
    support = { dirs: {}, notes: ['disabled by BERTH_CGROUPS=0'] };
    return support;
  }
  const tag = ownerTag();
  if (!tag) {
    support = { dirs: {}, notes: ['no /proc'] };
    return support;
  }
  const mounts = cgroupMounts();
  const own = ownCgroups();
  support = probeV2(mounts, own, tag) ?? probeV1(mounts, own, tag);
  if (support.version) {
    process.once('exit', () => {
      for (const group of live) group.removeSync();
    });
  }
  return support;
}

const live = new Set<CommandGroup>();
let counter = 0;

/** The group of one command. */
export class CommandGroup {
  private removed = false;

  private constructor(
    readonly version: CgroupVersion,
    /** The group's folder per controller it uses. */
    private readonly dirs: Partial<Record<Controller, string>>,
  ) {}

  /**
   * Makes a group with `limits`, or returns undefined when cgroups are not usable here
   * (or a limit cannot be written: the caller then falls back to rlimits).
   */
  static create(limits: CgroupLimits): CommandGroup | undefined {
    const s = cgroupSupport();
    if (!s.version) return undefined;
    const name = `${ownerTag()}-c${++counter}`;
    const dirs: Partial<Record<Controller, string>> = {};
    const group = new CommandGroup(s.version, dirs);
    try {
      for (const [controller, parent] of Object.entries(s.dirs) as [Controller, string][]) {
        const dir = join(parent, name);
        if (!Object.values(dirs).includes(dir)) mkdirSync(dir);
        dirs[controller] = dir;
      }
      group.apply(limits);
    } catch {
      for (const dir of new Set(Object.values(dirs))) removeTreeSync(dir);
      return undefined;
    }
    live.add(group);
    return group;
  }

  private apply(limits: CgroupLimits): void {
    const { pids, memory, cpu } = this.dirs;
    const processes = String(Math.max(1, Math.floor(limits.processes)));
    const bytes = String(Math.max(1024 * 1024, Math.floor(limits.memoryBytes)));
    if (this.version === 'v2') {
      writeFileSync(join(pids as string, 'pids.max'), processes);
      writeFileSync(join(memory as string, 'memory.max'), bytes);
      try {
        writeFileSync(join(memory as string, 'memory.swap.max'), '0');
      } catch {}
      if (cpu && limits.cpus)
        writeFileSync(join(cpu, 'cpu.max'), `${Math.round(limits.cpus * 100_000)} 100000`);
      return;
    }
    writeFileSync(join(pids as string, 'pids.max'), processes);
    writeFileSync(join(memory as string, 'memory.limit_in_bytes'), bytes);
    try {
      // No swap beyond the limit (the file exists only with swap accounting).
      writeFileSync(join(memory as string, 'memory.memsw.limit_in_bytes'), bytes);
    } catch {}
    if (cpu && limits.cpus) {
      writeFileSync(join(cpu, 'cpu.cfs_period_us'), '100000');
      writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpus * 100_000))));
    }
  }

  /** Whether the group has a CPU quota controller. */
  get hasCpu(): boolean {
    return this.dirs.cpu !== undefined;
  }

  /**
   * The argv prefix that moves the command into the group before anything of it runs:
   * a root `sh` writes its own pid to each `cgroup.procs`, then `exec`s the rest (exit 125
   * when it cannot). `limits`: shell lines that set the command's rlimits in the same shell
   * once it is inside (limits.ts `ulimitScript`; exit 125 when they fail), instead of a
   * `prlimit` program after it.
   */
  enterPrefix(limits?: string): string[] {
    const files = [...new Set(Object.values(this.dirs))].map((d) => `'${join(d, 'cgroup.procs')}'`);
    const writes = files.map((f) => `echo $$ > ${f}`).join(' && ');
    const rlimits = limits ? ` ${limits} || { echo 'berth: cannot set the limits' >&2; exit 125; };` : '';
    return [
      'sh',
      '-c',
      `${writes} || { echo 'berth: cannot enter the cgroup' >&2; exit 125; };${rlimits} exec "$@"`,
      'berth-cgroup',
    ];
  }

  /** What the group saw so far. */
  stats(): CgroupStats {
    const { pids, memory } = this.dirs;
    const p = pids as string;
    const m = memory as string;
    if (this.version === 'v2') {
      const peak = Number(read(join(m, 'memory.peak')) ?? Number.NaN);
      return {
        pidsRefused: keyed(join(p, 'pids.events'), 'max'),
        oomKills: keyed(join(m, 'memory.events'), 'oom_kill'),
        ...(Number.isFinite(peak) ? { peakMemoryBytes: peak } : {}),
      };
    }
    const peak = Number(read(join(m, 'memory.max_usage_in_bytes')) ?? Number.NaN);
    const peakPids = Number(read(join(p, 'pids.peak')) ?? Number.NaN);
    return {
      pidsRefused: keyed(join(p, 'pids.events'), 'max'),
      oomKills: keyed(join(m, 'memory.oom_control'), 'oom_kill'),
      ...(Number.isFinite(peak) ? { peakMemoryBytes: peak } : {}),
      ...(Number.isFinite(peakPids) ? { peakProcesses: peakPids } : {}),
    };
  }

  /** Whether no folder of the group lists a process (v1: each controller's folder has its own list). */
  private empty(): boolean {
    for (const dir of new Set(Object.values(this.dirs))) {
      const listed = read(join(dir, 'cgroup.procs'));
      // Unreadable: not known to be empty.
      if (listed === undefined || listed.trim() !== '') return false;
    }
    return true;
  }

  /** Pids in the group now. */
  pids(): number[] {
    return (read(join(this.dirs.pids as string, 'cgroup.procs')) ?? '')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  }

  /**
   * Kills every process in the group. v2: `cgroup.kill`. v1: the group is frozen first (when
   * the freezer is mounted), so a fork bomb cannot outrun the kill, then thawed to let the
   * SIGKILLs land; a group with no process in any of its folders is left as it is (the usual
   * end of a command): nothing in it can fork, and only root moves a process in, so it stays
   * empty, and each write to `freezer.state` waits for the kernel (tens of milliseconds
   * measured on a loaded host, twice per command).
   */
  killAll(): void {
    if (this.removed) return;
    if (this.version === 'v2') {
      try {
        writeFileSync(join(this.dirs.pids as string, 'cgroup.kill'), '1');
        return;
      } catch {}
    }
    if (this.version === 'v1' && this.empty()) return;
    const freezer = this.version === 'v1' ? this.dirs.freezer : undefined;
    if (freezer) {
      try {
        writeFileSync(join(freezer, 'freezer.state'), 'FROZEN');
        for (let i = 0; i < 100 && read(join(freezer, 'freezer.state'))?.trim() !== 'FROZEN'; i++)
          sleepSync(1);
      } catch {}
    }
    for (let i = 0; i < 20 && killListed(this.dirs.pids as string) > 0 && !freezer; i++);
    if (freezer) {
      killListed(this.dirs.pids as string);
      try {
        writeFileSync(join(freezer, 'freezer.state'), 'THAWED');
      } catch {}
    }
  }

  /** Kills what is left and removes the group's folders (waits up to about a second for them to empty). */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.killAll();
    this.removed = true;
    live.delete(this);
    for (const dir of new Set(Object.values(this.dirs))) await removeTree(dir);
  }

  /** The same, blocking (at berth's exit). */
  removeSync(): void {
    if (this.removed) return;
    this.killAll();
    this.removed = true;
    live.delete(this);
    for (const dir of new Set(Object.values(this.dirs))) removeTreeSync(dir);
  }
}
