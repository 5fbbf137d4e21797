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
 * so the trial could not chmod them.) Node has no binding for these calls: a short Perl program
 * (its `syscall`, no module) makes them, one process per trial.
 *
 * Where the overlay cannot be mounted (not root, no perl, an architecture whose syscall numbers
 * berth does not know, a kernel or file system that refuses idmapped or overlay mounts),
 * {@link mountOverlays} says why and the caller copies.
 */
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { isRoot } from '../../sandbox/identity.ts';

/**
 * The mounting program (Perl: `perl-base` is part of every Debian system, and a `perl` with no
 * module starts in a few milliseconds where `python3 -I -S` with `ctypes` took about 60 ms of
 * CPU, docs/speed.md). Perl's `syscall` passes a number as a number and any other value as a
 * pointer to its bytes (always NUL-terminated). open_tree and mount_setattr have one number on
 * every architecture since Linux 5.1's unified table; unshare, mount and umount2 do not and come
 * first in the arguments ({@link SYSCALLS}). Arguments: those three numbers, uid, gid, then for
 * each overlay lower, target, upper, work. With uid and gid 0 the lower folders are used as
 * they are, else each is an idmapped detached clone (root -> uid/gid; one user namespace for all
 * of them). Exit 0 when every overlay is mounted; else none stays mounted and a line on stderr
 * names the call that failed.
 */
const MOUNT_PROGRAM = String.raw`
my ($nr_unshare, $nr_mount, $nr_umount2, $uid, $gid, @layers) = @ARGV;
my (@done, $userns, $ns);
sub fail {
    my $why = "$_[0]: $!";
    syscall($nr_umount2, $_, 2) for reverse @done;
    print STDERR "$why\n";
    exit 1;
}
if ($uid || $gid) {
    pipe(my $ready_r, my $ready_w) or fail("pipe");
    pipe(my $go_r, my $go_w) or fail("pipe");
    my $pid = fork() // fail("fork");
    if ($pid == 0) {
        close $ready_r; close $go_w;
        exit 1 if syscall($nr_unshare, 0x10000000) != 0;
        syswrite $ready_w, "1"; sysread $go_r, my $byte, 1; exit 0;
    }
    close $ready_w; close $go_r;
    my $got = "";
    sysread $ready_r, $got, 1;
    if ($got ne "1") { waitpid $pid, 0; fail("unshare(CLONE_NEWUSER)") }
    for (["uid_map", "0 $uid 1\n"], ["setgroups", "deny\n"], ["gid_map", "0 $gid 1\n"]) {
        my ($name, $text) = @$_;
        open my $f, ">", "/proc/$pid/$name" or fail($name);
        (syswrite($f, $text) // -1) == length $text or fail($name);
        close $f;
    }
    open $ns, "<", "/proc/$pid/ns/user" or fail("the user namespace");
    $userns = fileno $ns;
    close $go_w; waitpid $pid, 0;
}
my ($empty, $overlay) = ("\0", "overlay");
while (my ($lower, $target, $upper, $work) = splice @layers, 0, 4) {
    if (defined $userns) {
        # open_tree(AT_FDCWD, lower, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)
        my $fd = syscall(428, -100, $lower, 1 | 0x80000);
        fail("open_tree") if $fd < 0;
        # struct mount_attr: attr_set (idmap, read-only, nosuid, nodev), attr_clr, propagation, userns_fd
        my $attr = pack "QQQQ", 0x100000 | 1 | 2 | 4, 0, 0, $userns;
        fail("mount_setattr(MOUNT_ATTR_IDMAP)") if syscall(442, $fd, $empty, 0x1000, $attr, 32) != 0;
        $lower = "/proc/self/fd/$fd";
    }
    my $data = "lowerdir=$lower,upperdir=$upper,workdir=$work,redirect_dir=on";
    # MS_NOSUID | MS_NODEV
    fail("mount overlay") if syscall($nr_mount, $overlay, $target, $overlay, 2 | 4, $data) != 0;
    push @done, $target;
}
`;

/** unshare, mount and umount2 by architecture (Node's `process.arch`); elsewhere the trial copies. */
const SYSCALLS: Partial<Record<string, [unshare: number, mount: number, umount2: number]>> = {
  x64: [272, 165, 166],
  arm64: [97, 40, 39],
};

/** Characters overlayfs reads as separators in its options: such a path is not mounted. */
const UNSAFE_PATH = /[,:\\\n]/;

/** The Perl that runs {@link MOUNT_PROGRAM}: Debian's, else `perl` on PATH. */
const perl = () => (existsSync('/usr/bin/perl') ? '/usr/bin/perl' : 'perl');

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
    const numbers = SYSCALLS[process.arch];
    if (!numbers) {
      await cleanUp();
      return `no mount program for ${process.arch}`;
    }
    const { uid, gid } = owner ?? { uid: 0, gid: 0 };
    // No variable of berth's reaches the program (PERL5OPT, PERL5LIB: code a root program would run).
    const run = await execa(
      perl(),
      ['-e', MOUNT_PROGRAM, '--', ...numbers.map(String), String(uid), String(gid), ...layers],
      { reject: false, timeout: 60_000, env: {}, extendEnv: false },
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
