/**
 * Writable folders with a size cap: as root, a folder becomes the mount point
 * of a tmpfs of the given size (`nosuid,nodev`), so untrusted code that
 * writes into it gets ENOSPC at the cap instead of filling the host's disk.
 * The tmpfs lives in memory (its pages count against the memory of whoever
 * wrote them); it is unmounted, and its content gone, when released. The
 * mount's source is named `berth-<pid>-<start time>` after its owner, so a
 * mount left by a berth process that is gone (kill -9) is unmounted at the
 * next probe. Not root, or `mount` refused (a container without
 * CAP_SYS_ADMIN): the folder stays a plain folder and only the per-file limit
 * (RLIMIT_FSIZE) applies.
 */
import { execFile } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ownerAlive, ownerTag } from './cgroup.ts';
import { isRoot } from './identity.ts';

const run = promisify(execFile);

let probed: Promise<string | undefined> | undefined;

/** The mounts whose source is a `berth-<pid>-<start>` tag, with their mount points. */
async function berthMounts(): Promise<{ source: string; point: string }[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const out: { source: string; point: string }[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const [fstype, source] = right.split(' ');
    if (fstype !== 'tmpfs' || !source?.startsWith('berth-')) continue;
    out.push({ source, point: (left.split(' ')[4] ?? '').replace(/\\040/g, ' ') });
  }
  return out;
}

/** Why folders cannot be capped here, or undefined when they can (checked once; unmounts stale caps). */
export function cappedFolderSupport(): Promise<string | undefined> {
  probed ??= (async () => {
    if (process.env.BERTH_CAPPED_FOLDERS === '0') return 'disabled by BERTH_CAPPED_FOLDERS=0';
    if (!isRoot) return 'needs root (mount)';
    if (!ownerTag()) return 'no /proc';
    for (const m of await berthMounts()) {
      if (!ownerAlive(m.source)) await run('umount', ['-l', m.point]).catch(() => {});
    }
    return undefined;
  })();
  return probed;
}

/**
 * Mounts a tmpfs of `bytes` on `dir` (an existing, empty folder), owned by `owner` (default
 * root) with `mode`. Returns why it could not, or undefined when `dir` is capped now.
 */
export async function capFolder(
  dir: string,
  bytes: number,
  owner?: { uid: number; gid: number },
  mode = 0o755,
): Promise<string | undefined> {
  const unsupported = await cappedFolderSupport();
  if (unsupported) return unsupported;
  const options = [
    `size=${Math.max(1024 * 1024, Math.floor(bytes))}`,
    `mode=${mode.toString(8)}`,
    'nosuid',
    'nodev',
  ];
  if (owner) options.push(`uid=${owner.uid}`, `gid=${owner.gid}`);
  try {
    await run('mount', ['-t', 'tmpfs', '-o', options.join(','), ownerTag() as string, dir]);
    return undefined;
  } catch (error) {
    const text = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    return `mount: ${text.split('\n')[0]}`;
  }
}

/** Unmounts a capped folder (lazily when still busy); its content is gone. A plain folder is left alone. */
export async function releaseFolder(dir: string): Promise<void> {
  const mounted = (await berthMounts()).some((m) => m.point === dir);
  if (!mounted) return;
  await run('umount', [dir]).catch(() => run('umount', ['-l', dir]).catch(() => {}));
}

/** Bytes in use in the file system of `dir` (a size-capped tmpfs: what its files hold); undefined when unknown. */
export function folderUsedBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return (s.blocks - s.bfree) * s.bsize;
  } catch {
    return undefined;
  }
}

/** Whether the file system holding `dir` has (almost) no room left: under 1% or 64 KiB free. */
export function folderFull(dir: string): boolean {
  try {
    const s = statfsSync(dir);
    const free = s.bavail * s.bsize;
    return free < Math.max(64 * 1024, (s.blocks * s.bsize) / 100);
  } catch {
    return false;
  }
}
