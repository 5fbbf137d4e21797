/**
 * Isolation of untrusted commands on this machine (the tests after the model's
 * patch, anything an agent runs). In order of preference:
 *
 * - `bwrap` (Debian's bubblewrap): new pid namespace (`--unshare-pid`, the
 *   command and everything it starts die with it), `--die-with-parent` (a
 *   killed berth takes the sandbox down), `--new-session`, no network
 *   (`--unshare-net`, unless the policy is `public`), the host's file system
 *   read-only (`--ro-bind / /`) except the trial's own folder and a private
 *   `/tmp`. When berth runs as root the command runs (via `setpriv`, no
 *   capabilities, no-new-privs) as an unprivileged uid (a slot of the
 *   function-level sandbox's uid block, see src/functional/sandbox.ts), so it
 *   can neither write berth's files nor signal berth. A home folder the uid cannot enter (`/root`) is replaced by
 *   an empty tmpfs in which the `PATH` entries under it (pyenv, cargo, ...)
 *   are bound back read-only, so `python3`/`pytest` are still found.
 * - `unshare` (root; util-linux): new pid and network namespaces,
 *   `--kill-child`, then `setpriv` to the unprivileged uid; the file system is
 *   the host's, protected only by that uid's rights.
 * - `unshare-user` (not root): the same in an unprivileged user namespace.
 *
 * Probed once per process; the result says which method works, or that none does.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, sep } from 'node:path';
import { execa } from 'execa';
import { MAX_SLOTS, slotIdentity } from '../../functional/sandbox.ts';

export type IsolationMethod = 'bwrap' | 'unshare' | 'unshare-user';

export interface IsolationProbe {
  /** The method that works here, or undefined when commands cannot be isolated. */
  method?: IsolationMethod;
  /** Why each method failed, for the record. */
  notes: string[];
}

/** The uid/gid a sandboxed command runs as (undefined: berth's own, when berth is not root). */
export type SandboxIdentity = { uid: number; gid: number } | undefined;

/** What one sandboxed command may see. */
export interface SandboxSpec {
  /** The trial's folder: the only writable host path (bound at the same path). */
  writable?: string;
  /** More host folders at the same path (after the private /tmp, so they show through it). */
  binds?: readonly { path: string; writable?: boolean }[];
  /** Cut the network (default true). */
  noNetwork?: boolean;
  identity?: SandboxIdentity;
  /** The host's environment, for `HOME` and `PATH` (default process.env). */
  env?: Record<string, string | undefined>;
}

// unshare leaves the loopback interface down in the new namespace (bwrap brings it up):
// bring it up, so tests that talk to a local server still work.
const LO_UP = ['sh', '-c', 'ip link set lo up 2>/dev/null || true; exec "$@"', 'berth-netns'];

/** Every method berth knows, in the order `auto` tries them. */
export const ISOLATION_METHODS: readonly IsolationMethod[] = ['bwrap', 'unshare', 'unshare-user'];

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

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

/** Whether `uid` (not root) may enter `dir`: world-executable, or owned by it and owner-executable. */
function enterable(dir: string, uid: number): boolean {
  try {
    const s = statSync(dir);
    if (s.uid === uid) return (s.mode & 0o100) !== 0;
    return (s.mode & 0o001) !== 0;
  } catch {
    return false;
  }
}

/** The folders above `path` (top down) that lie strictly inside one of `roots`. */
function ancestorsInside(path: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  let dir = dirname(path);
  while (dir !== dirname(dir)) {
    if (roots.some((root) => dir.startsWith(`${root}${sep}`))) out.unshift(dir);
    dir = dirname(dir);
  }
  return out;
}

/** `--tmpfs HOME` plus read-only binds of the PATH entries under it, when the uid cannot enter HOME. */
function homeMounts(spec: SandboxSpec): string[] {
  const env = spec.env ?? process.env;
  const home = env.HOME;
  if (!spec.identity || !home || !isAbsolute(home) || home === '/') return [];
  if (enterable(home, spec.identity.uid)) return [];
  // World-writable like /tmp, so tools that keep caches in HOME still work.
  const args = ['--perms', '1777', '--tmpfs', home];
  const bound = new Set<string>();
  for (const entry of (env.PATH ?? '').split(':')) {
    const rel = relative(home, entry);
    if (!entry || !isAbsolute(entry) || rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
    const top = `${home}${sep}${rel.split(sep)[0]}`;
    if (bound.has(top)) continue;
    try {
      accessSync(top, constants.R_OK);
      bound.add(top);
      args.push('--ro-bind', top, top);
    } catch {}
  }
  return args;
}

/**
 * The argv prefix running a command in `method`'s sandbox, and the uid/gid to spawn it as.
 * The command follows the prefix (it ends with `--`).
 */
export function sandboxCommand(
  method: IsolationMethod,
  spec: SandboxSpec,
): { prefix: string[]; spawnAs: SandboxIdentity } {
  const noNetwork = spec.noNetwork ?? true;
  const net = noNetwork ? ['--unshare-net'] : [];
  const drop = spec.identity
    ? [
        'setpriv',
        `--reuid=${spec.identity.uid}`,
        `--regid=${spec.identity.gid}`,
        '--clear-groups',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--no-new-privs',
        '--',
      ]
    : [];
  if (method === 'bwrap') {
    const prefix = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
    // The private /tmp is world-writable with the sticky bit, like the host's.
    prefix.push('--perms', '1777', '--tmpfs', '/tmp');
    const home = homeMounts(spec);
    prefix.push(...home);
    if (spec.writable) prefix.push('--bind', spec.writable, spec.writable);
    // bwrap would make the missing folders above a bind inside a tmpfs with mode 0700 (root's):
    // make them 0755 first, so the sandbox uid can walk down to the bound folder.
    const tmpfsRoots = ['/tmp', ...(home.length > 0 && spec.env?.HOME ? [spec.env.HOME] : [])];
    if (home.length > 0 && !spec.env && process.env.HOME) tmpfsRoots.push(process.env.HOME);
    for (const bind of spec.binds ?? []) {
      for (const dir of ancestorsInside(bind.path, tmpfsRoots)) prefix.push('--perms', '0755', '--dir', dir);
      prefix.push(bind.writable ? '--bind' : '--ro-bind', bind.path, bind.path);
    }
    prefix.push('--unshare-pid', ...net, '--die-with-parent', '--new-session', '--', ...drop);
    // bwrap runs as berth's user (root: it can still bind the toolchain under /root), and
    // setpriv drops to the unprivileged uid inside, with no capabilities left.
    return { prefix, spawnAs: undefined };
  }
  const ns = ['--pid', '--fork', '--kill-child', '--mount-proc', ...(noNetwork ? ['--net'] : [])];
  if (method === 'unshare')
    return { prefix: ['unshare', ...ns, '--', ...LO_UP, ...drop], spawnAs: undefined };
  return { prefix: ['unshare', '--map-root-user', ...ns, '--', ...LO_UP], spawnAs: undefined };
}

const checked = new Map<IsolationMethod, Promise<string | undefined>>();

/** Why `method` does not isolate here, or undefined when it works (probed once per process). */
export function checkIsolationMethod(method: IsolationMethod): Promise<string | undefined> {
  let probe = checked.get(method);
  if (!probe) {
    probe = works(method);
    checked.set(method, probe);
  }
  return probe;
}

let cached: Promise<IsolationProbe> | undefined;

async function works(method: IsolationMethod): Promise<string | undefined> {
  if (method === 'unshare' && !isRoot) return 'needs root';
  if (method === 'unshare-user' && isRoot) return 'berth runs as root: use unshare';
  const { slot, identity } = claimIdentity();
  releaseIdentity(slot);
  const { prefix, spawnAs } = sandboxCommand(method, { identity });
  // The probe checks the namespace really has no route out (only `lo` may exist) and that
  // the command is pid 1's child in a fresh pid namespace.
  const result = await execa(
    prefix[0] as string,
    [...prefix.slice(1), 'sh', '-c', 'cat /proc/net/dev; echo "pid $$"'],
    {
      reject: false,
      timeout: 10_000,
      cwd: '/',
      ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
    },
  );
  if (result.exitCode !== 0)
    return (result.stderr || result.shortMessage || 'failed').toString().split('\n')[0];
  const lines = result.stdout.split('\n');
  const pid = Number(lines.find((l) => l.startsWith('pid '))?.slice(4));
  if (!(pid > 0 && pid < 10)) return `no own pid namespace (pid ${pid})`;
  const interfaces = lines
    .filter((l) => l.includes(':') && !l.includes('|'))
    .map((line) => line.split(':')[0]?.trim())
    .filter((name) => name && name !== 'lo');
  return interfaces.length === 0 ? undefined : `network interfaces still visible: ${interfaces.join(', ')}`;
}

/**
 * Finds the first isolation method that works on this machine (cached).
 * `BERTH_NO_ISOLATION=1` disables isolation; `BERTH_ISOLATION=bwrap|unshare|unshare-user`
 * asks for one method (none is used when it does not work here).
 */
export function probeIsolation(): Promise<IsolationProbe> {
  cached ??= (async () => {
    const notes: string[] = [];
    if (process.env.BERTH_NO_ISOLATION === '1') return { notes: ['disabled by BERTH_NO_ISOLATION=1'] };
    const wanted = process.env.BERTH_ISOLATION as IsolationMethod | undefined;
    const methods = wanted && ISOLATION_METHODS.includes(wanted) ? [wanted] : ISOLATION_METHODS;
    for (const method of methods) {
      const problem = await checkIsolationMethod(method);
      if (problem === undefined) return { method, notes };
      notes.push(`${method}: ${problem}`);
    }
    return { notes };
  })();
  return cached;
}
