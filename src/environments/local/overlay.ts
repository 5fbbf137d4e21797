/**
 * Copy-on-write views of an install-cache entry (issue 18): the entry's folder becomes the lower
 * layer of an overlayfs mounted on the trial's repository folder, whose upper and work folders
 * live in the trial's own size-capped tmpfs. The trial sees a writable tree, pays nothing for
 * the files it does not change, and everything it writes, deletes, renames or chmods lands in
 * its upper folder: never in the entry, never in the next trial.
 *
 * Ownership: the entry is root's (berth writes it), the trial runs as its slot's uid. The lower
 * layer is an *idmapped* mount of the entry (Linux 5.19+: overlayfs accepts idmapped layers):
 * a detached clone of the entry's folder (`open_tree`), mapped so that root's files appear as
 * the trial's uid and gid (`mount_setattr(MOUNT_ATTR_IDMAP)`, read-only, nosuid, nodev), handed
 * to the overlay as `/proc/self/fd/N` and never attached anywhere: no path leads to it. A
 * copy-up then makes the trial's own file, as a copy would, so `chmod`, `utimes` and
 * `npm install` work as on a copy. (Entries owned per slot uid would need one entry per uid,
 * and a berth process claims a new block of uids; a shared group with g+w leaves files root's,
 * so the trial could not chmod them.) Node has no binding for these calls: a short Python
 * program (ctypes, Debian's python3) makes them, one process per trial.
 *
 * Where the overlay cannot be mounted (not root, no python3, a kernel or file system that
 * refuses idmapped or overlay mounts), {@link mountOverlay} says why and the caller copies.
 */
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { isRoot } from '../../sandbox/identity.ts';

/**
 * The mounting program (Python 3, ctypes; open_tree and mount_setattr have one number on every
 * architecture since Linux 5.1's unified table). Arguments: uid, gid, then for each overlay
 * lower, target, upper, work. With uid and gid 0 the lower folders are used as they are, else
 * each is an idmapped detached clone (root -> uid/gid; one user namespace for all of them).
 * Exit 0 when every overlay is mounted; else none stays mounted and a line on stderr names the
 * call that failed.
 */
const MOUNT_PROGRAM = String.raw`
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
OPEN_TREE, MOUNT_SETATTR = 428, 442
done = []
def fail(what):
    err = ctypes.get_errno()
    for t in reversed(done): libc.umount2(t.encode(), 2)
    sys.stderr.write(what + ": " + os.strerror(err) + "\n"); sys.exit(1)
uid, gid = int(sys.argv[1]), int(sys.argv[2])
layers = sys.argv[3:]
userns = None
if uid or gid:
    ready_r, ready_w = os.pipe(); go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r); os.close(go_w)
        if libc.unshare(0x10000000) != 0: os._exit(1)
        os.write(ready_w, b"1"); os.read(go_r, 1); os._exit(0)
    os.close(ready_w); os.close(go_r)
    if os.read(ready_r, 1) != b"1":
        os.waitpid(pid, 0); fail("unshare(CLONE_NEWUSER)")
    for name, text in (("uid_map", "0 %d 1\n" % uid), ("setgroups", "deny\n"), ("gid_map", "0 %d 1\n" % gid)):
        with open("/proc/%d/%s" % (pid, name), "w") as f: f.write(text)
    userns = os.open("/proc/%d/ns/user" % pid, os.O_RDONLY | os.O_CLOEXEC)
    os.close(go_w); os.waitpid(pid, 0)
for i in range(0, len(layers), 4):
    lower, target, upper, work = layers[i:i + 4]
    if userns is not None:
        fd = libc.syscall(OPEN_TREE, -100, lower.encode(), 1 | os.O_CLOEXEC)
        if fd < 0: fail("open_tree")
        # struct mount_attr: attr_set (idmap, read-only, nosuid, nodev), attr_clr, propagation, userns_fd
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", 0x100000 | 1 | 2 | 4, 0, 0, userns))
        if libc.syscall(MOUNT_SETATTR, fd, b"", 0x1000, attr, 32) < 0: fail("mount_setattr(MOUNT_ATTR_IDMAP)")
        lower = "/proc/self/fd/%d" % fd
    data = "lowerdir=%s,upperdir=%s,workdir=%s,redirect_dir=on" % (lower, upper, work)
    if libc.mount(b"overlay", target.encode(), b"overlay", 2 | 4, data.encode()) != 0: fail("mount overlay")
    done.append(target)
`;

/** Characters overlayfs reads as separators in its options: such a path is not mounted. */
const UNSAFE_PATH = /[,:\\\n]/;

/** The Python that runs {@link MOUNT_PROGRAM}: Debian's, else `python3` on PATH. */
const python = () => (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** One overlay: `lower` (an install-cache folder, root's) seen copy-on-write at `target`. */
export interface OverlaySpec {
  /** The read-only lower layer. */
  lower: string;
  /** An existing empty folder, the mount point. */
  target: string;
  /**
   * A new folder (made root's, 0700) for the overlay's upper and work folders, on the trial's
   * capped tmpfs, so what the trial writes counts against its cap.
   */
  scratch: string;
}

/**
 * Mounts every overlay of `specs` with one process (nosuid, nodev): each tree appears owned by
 * `owner` (default root), through an idmapped lower layer attached at no path. Unmount the
 * targets ({@link unmountAll}) at stop.
 * @returns undefined when all are mounted; else why not (then none is mounted and every
 *   `scratch` is removed).
 */
export async function mountOverlays(
  specs: readonly OverlaySpec[],
  owner?: { uid: number; gid: number },
): Promise<string | undefined> {
  if (!isRoot) return 'needs root';
  const layers: string[] = [];
  const cleanUp = async () => {
    // Killed after a mount (the timeout)? Nothing may stay mounted where a copy goes instead.
    await unmountAll(specs.map((spec) => spec.target));
    for (const spec of specs) await rm(spec.scratch, { recursive: true, force: true }).catch(() => {});
  };
  try {
    for (const { lower, target, scratch } of specs) {
      const upper = join(scratch, 'upper');
      const work = join(scratch, 'work');
      if ([lower, target, upper].some((p) => UNSAFE_PATH.test(p))) return 'a path holds , : or \\';
      await mkdir(scratch, { mode: 0o700 });
      await mkdir(upper);
      await mkdir(work);
      // The merged folder's own owner and mode are the upper folder's.
      await chmod(upper, (await stat(lower)).mode & 0o7777);
      if (owner) await chown(upper, owner.uid, owner.gid);
      layers.push(lower, target, upper, work);
    }
    const { uid, gid } = owner ?? { uid: 0, gid: 0 };
    const run = await execa(
      python(),
      ['-I', '-S', '-c', MOUNT_PROGRAM, String(uid), String(gid), ...layers],
      {
        reject: false,
        timeout: 60_000,
      },
    );
    if (run.exitCode === 0) return undefined;
    const why =
      String(run.stderr || run.message || run.exitCode)
        .trim()
        .split('\n')
        .at(-1) ?? '';
    await cleanUp();
    return why.slice(0, 200);
  } catch (error) {
    await cleanUp();
    return (error as Error).message.split('\n')[0]?.slice(0, 200) ?? 'failed';
  }
}

/** The upper folder of an overlay that {@link mountOverlays} mounted with `scratch`: what the trial wrote. */
export function overlayUpper(scratch: string): string {
  return join(scratch, 'upper');
}

/**
 * Unmounts `points` (overlays from {@link mountOverlays}, lazily when busy), last first; never
 * throws. One `umount` process for all of them; a point it could not unmount (busy) is detached.
 */
export async function unmountAll(points: readonly string[]): Promise<void> {
  if (points.length === 0) return;
  const order = [...points].reverse();
  const run = await execa('umount', ['--', ...order], { reject: false });
  if (run.exitCode !== 0)
    for (const point of order) await execa('umount', ['-l', '--', point]).catch(() => {});
}
