/**
 * The unprivileged uids untrusted commands run as. When berth runs as root,
 * each berth process claims a block of `MAX_SLOTS` uids (from
 * `BERTH_SANDBOX_UID_BASE`, default 61000) with a lock file named after the
 * block, holding its pid (a lock whose pid is gone is taken over; the lock is
 * removed at exit). Function-level samples use the lower half of the block,
 * one uid per concurrent slot; local environments the upper half, one uid per
 * environment. Process counts (RLIMIT_NPROC) are per uid, so a fork bomb in
 * one slot cannot starve another. The uids need no /etc/passwd entry.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The uid/gid a sandboxed command runs as (undefined: berth's own, when berth is not root). */
export type SandboxIdentity = { uid: number; gid: number } | undefined;

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Slots per berth process: the most samples one evaluation runs at once, plus the local environments. */
export const MAX_SLOTS = 64;
/** Blocks of MAX_SLOTS uids that concurrent berth processes can claim. */
const UID_BLOCKS = 1000;
let claimedBase: number | undefined;

/** Whether a process with this pid exists (EPERM: it exists but is not ours). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The pids of the host's processes whose real, effective, saved or file-system uid is `uid`
 * (from `/proc/<pid>/status`; a process gone meanwhile is left out). Empty where /proc is absent.
 */
export function processesOfUid(uid: number): number[] {
  const pids: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    if (uids.includes(uid)) pids.push(Number(name));
  }
  return pids;
}

/** The first uid of this process's block (claimed once, see the module's comment). */
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
export function slotIdentity(slot: number): SandboxIdentity {
  if (!isRoot) return undefined;
  if (slot < 0 || slot >= MAX_SLOTS) throw new RangeError(`slot ${slot} outside 0..${MAX_SLOTS - 1}`);
  const uid = uidBase() + slot;
  return { uid, gid: uid };
}

/** Local environments use the upper half of this process's uid block (functional samples use the lower). */
const LOCAL_SLOTS = Array.from({ length: MAX_SLOTS / 2 }, (_, i) => MAX_SLOTS / 2 + i);
const inUse = new Set<number>();
let nextShared = 0;

/**
 * Claims a uid for one environment (release it with releaseIdentity). When berth is not root,
 * undefined (commands run as berth's user). More environments than slots share uids.
 */
export function claimIdentity(): { slot: number; identity: SandboxIdentity } {
  const slot =
    LOCAL_SLOTS.find((s) => !inUse.has(s)) ?? (LOCAL_SLOTS[nextShared++ % LOCAL_SLOTS.length] as number);
  inUse.add(slot);
  return { slot, identity: slotIdentity(slot) };
}

export function releaseIdentity(slot: number): void {
  inUse.delete(slot);
}
