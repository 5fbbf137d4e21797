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
 * architecture since Linux 5.1's unified table). Arguments:
 * lower, target, upper, work, uid, gid. With uid and gid 0 the lower folder is used as it is.
 * Exit 0 when mounted; else a line on stderr naming the call that failed.
 */
const MOUNT_PROGRAM = String.raw`
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
OPEN_TREE, MOUNT_SETATTR = 428, 442
def fail(what):
    sys.stderr.write(what + ": " + os.strerror(ctypes.get_errno()) + "\n"); sys.exit(1)
lower, target, upper, work = sys.argv[1:5]
uid, gid = int(sys.argv[5]), int(sys.argv[6])
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
    fd = libc.syscall(OPEN_TREE, -100, lower.encode(), 1 | os.O_CLOEXEC)
    if fd < 0: fail("open_tree")
    # struct mount_attr: attr_set (idmap, read-only, nosuid, nodev), attr_clr, propagation, userns_fd
    attr = ctypes.create_string_buffer(struct.pack("QQQQ", 0x100000 | 1 | 2 | 4, 0, 0, userns))
    if libc.syscall(MOUNT_SETATTR, fd, b"", 0x1000, attr, 32) < 0: fail("mount_setattr(MOUNT_ATTR_IDMAP)")
    lower = "/proc/self/fd/%d" % fd
data = "lowerdir=%s,upperdir=%s,workdir=%s,redirect_dir=on" % (lower, upper, work)
if libc.mount(b"overlay", target.encode(), b"overlay", 2 | 4, data.encode()) != 0: fail("mount overlay")
`;

/** Characters overlayfs reads as separators in its options: such a path is not mounted. */
const UNSAFE_PATH = /[,:\\\n]/;

/** The Python that runs {@link MOUNT_PROGRAM}: Debian's, else `python3` on PATH. */
const python = () => (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/**
 * Mounts `lower` (an install-cache entry's folder, root's) copy-on-write on `target` (an empty
 * folder): the overlay's upper and work folders are made in `scratch` (a new folder, root's,
 * 0700, on the trial's capped tmpfs, so what the trial writes counts against its cap), and the
 * tree appears owned by `owner` (default root). nosuid, nodev. Unmount `target` at stop.
 * @returns undefined when mounted; else why not (nothing is left mounted, `scratch` is removed).
 */
export async function mountOverlay(
  lower: string,
  target: string,
  scratch: string,
  owner?: { uid: number; gid: number },
): Promise<string | undefined> {
  if (!isRoot) return 'needs root';
  const upper = join(scratch, 'upper');
  const work = join(scratch, 'work');
  if ([lower, target, upper].some((p) => UNSAFE_PATH.test(p))) return 'a path holds , : or \\';
  try {
    await mkdir(scratch, { mode: 0o700 });
    await mkdir(upper);
    await mkdir(work);
    // The merged folder's own owner and mode are the upper folder's.
    await chmod(upper, (await stat(lower)).mode & 0o7777);
    if (owner) await chown(upper, owner.uid, owner.gid);
    const { uid, gid } = owner ?? { uid: 0, gid: 0 };
    const run = await execa(
      python(),
      ['-I', '-S', '-c', MOUNT_PROGRAM, lower, target, upper, work, String(uid), String(gid)],
      { reject: false, timeout: 60_000 },
    );
    if (run.exitCode === 0) return undefined;
    const why =
      String(run.stderr || run.message || run.exitCode)
        .trim()
        .split('\n')
        .at(-1) ?? '';
    // Killed after its mount (the timeout)? Nothing may stay mounted where a copy goes instead.
    await execa('umount', ['--', target], { reject: false });
    await rm(scratch, { recursive: true, force: true });
    return why.slice(0, 200);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true }).catch(() => {});
    return (error as Error).message.split('\n')[0]?.slice(0, 200) ?? 'failed';
  }
}
