/**
 * How an untrusted command is isolated: the argv prefix that puts it in its
 * namespaces, and the probe that says which method works on this machine. One
 * builder serves two views of the host:
 *
 * - **`host` view** (local environments: a repository's tests, anything an
 *   agent runs). In order of preference:
 *   - `bwrap` (Debian's bubblewrap, run as berth's user): new pid namespace
 *     (`--unshare-pid`: the command and everything it starts die with it),
 *     `--die-with-parent` (a killed berth takes the sandbox down),
 *     `--new-session`, no network (`--unshare-net`, unless the policy is
 *     `public`). The file system is an allow-list of the host, read-only:
 *     `/usr`, `/etc`, the `/bin` `/lib*` `/sbin` links or folders, `/opt`,
 *     every absolute `PATH` folder, the toolchain folders a test run reads
 *     outside `PATH` (`toolchainFolders`: Maven's repository, Python's user
 *     site-packages, Go's module cache), the file `/etc/resolv.conf` links to
 *     outside `/etc` (with the network), and the binds the caller names
 *     (toolchain caches, agent packages); writable: the trial's own folder, a private,
 *     size-capped `/tmp`; `/dev` and `/proc` of its own. Nothing else of the
 *     host (no `/work`, `/home`, `/srv`, `/var`, `/run`): no dataset, gold
 *     patch or key file lying on the host can be read. `HOME` is an empty
 *     size-capped tmpfs in which the `PATH` entries under it (pyenv, cargo,
 *     ...) are bound back read-only (their top folder under `HOME`), so
 *     `python3`/`pytest` are still found. When berth runs as root the command
 *     runs (via `setpriv`, no capabilities, no-new-privs) as an unprivileged
 *     uid (identity.ts), so it can neither write berth's files nor signal
 *     berth.
 *   - `unshare` (root; util-linux): new pid and network namespaces,
 *     `--kill-child`, then `setpriv` to the unprivileged uid; the file system
 *     is the host's, protected only by that uid's rights: every world-readable
 *     file of the host is visible (only bwrap hides the host).
 *   - `unshare-user` (not root): the same in an unprivileged user namespace.
 * - **`minimal` view** (function-level samples, JVM runners): `bwrap` run as
 *   the slot's uid with every namespace unshared; only `/usr`, `/etc` (with the
 *   `/bin` `/lib*` `/sbin` links) and the paths a caller names (a JDK outside
 *   them, berth's helper and Kotlin's distribution) are visible, read-only;
 *   one folder is writable (bound at `/sample`, or at its own path) and `/tmp`
 *   is a small private tmpfs.
 *   Else `unshare` (user, pid, network, ipc, uts namespaces), the file system
 *   shared. Else `none`.
 *
 * Each (method, view) is probed once per process: the probe checks that the
 * command is in a fresh pid namespace and sees no network interface but `lo`.
 */
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isRoot, type SandboxIdentity, slotIdentity } from './identity.ts';

export type IsolationMethod = 'bwrap' | 'unshare' | 'unshare-user';

/** Every method of the host view, in the order `auto` tries them. */
export const ISOLATION_METHODS: readonly IsolationMethod[] = ['bwrap', 'unshare', 'unshare-user'];

/** Size of a private `/tmp` or home tmpfs inside a sandbox, in bytes, when the caller gives none. */
export const DEFAULT_TMPFS_BYTES = 64 * 1024 * 1024;

/** What one command run in the host view may see. */
export interface HostViewSpec {
  /** The trial's folder: the only writable host path (bound at the same path). */
  writable?: string;
  /** More host folders at the same path (after the private /tmp, so they show through it). */
  binds?: readonly { path: string; writable?: boolean }[];
  /** Cut the network (default true). */
  noNetwork?: boolean;
  identity?: SandboxIdentity;
  /** The host's environment, for `HOME` and `PATH` (default process.env). */
  env?: Record<string, string | undefined>;
  /** Size of the private `/tmp` and home tmpfs, in bytes (default 64 MiB). */
  tmpfsBytes?: number;
  /**
   * bwrap only: a link at `at` (a path in the private /tmp) to the host folder `of`, and the
   * command started in `cwd` (a path through that link). Its caller sets `PWD` to `cwd`, so
   * tools that take the working folder from `PWD` (bash, Go) see the same path in every trial,
   * whatever the trial folder's own name: Go's build cache keys a package by its folder.
   */
  alias?: { at: string; of: string; cwd: string };
}

/** What one command run in the minimal view may see. */
export interface MinimalViewSpec {
  /** Host paths visible read-only at the same path. */
  readOnly?: readonly string[];
  /** Host folders visible read-only at another path (bwrap): e.g. a folder under the host's /tmp, which the sandbox's /tmp would hide. */
  readOnlyAt?: readonly { source: string; target: string }[];
  /** The writable host folder, bound at `at` (default its own path); omitted with `privateBytes`. */
  writable?: string;
  /** Where the writable folder appears inside (e.g. `/sample`). */
  at?: string;
  /** Instead of `writable`: a fresh tmpfs of this many bytes at `at` (the host folder is not used). */
  privateBytes?: number;
  /** Size of the private `/tmp`, in bytes (default 64 MiB). */
  tmpfsBytes?: number;
  /** Run as this uid/gid inside a user namespace (bwrap `--uid/--gid`) instead of the spawning uid. */
  mapTo?: { uid: number; gid: number };
  /**
   * bwrap: `/` and `/dev` read-only (only `/tmp`, `/dev/shm` and the writable folder can be written),
   * and the command is the namespace's pid 1 (`--as-pid-1`: no bwrap init whose fds a process of
   * the sandbox's uid could take; the command must reap orphans and be non-dumpable itself).
   */
  sealed?: boolean;
  /**
   * bwrap started by root: no user namespace (root's would map the sandbox to the host's uid 0);
   * the command drops to `dropTo` itself inside (`setpriv`, see `dropTo`), so the host's permission
   * checks see that unprivileged uid, and bwrap can still bind paths only root may reach.
   */
  privileged?: { dropTo: { uid: number; gid: number } };
}

/** The argv prefix (ends with `--` or the wrapper's own argument) and the uid/gid to spawn it as. */
export interface IsolationPrefix {
  prefix: string[];
  spawnAs: SandboxIdentity;
}

// unshare leaves the loopback interface down in the new namespace (bwrap brings it up):
// bring it up, so tests that talk to a local server still work.
const LO_UP = ['sh', '-c', 'ip link set lo up 2>/dev/null || true; exec "$@"', 'berth-netns'];

/** `setpriv` down to `identity`, with no capabilities and no-new-privs; empty without an identity. */
export function dropTo(identity: SandboxIdentity): string[] {
  if (!identity) return [];
  return [
    'setpriv',
    `--reuid=${identity.uid}`,
    `--regid=${identity.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
  ];
}

/**
 * An argv prefix that closes every descriptor above 2, then runs the rest: a descriptor that
 * berth's own parent leaked without close-on-exec would otherwise reach the sandbox, since
 * Node's spawn, setpriv, prlimit, bwrap and unshare all pass every open descriptor on (bwrap's
 * init and the command too). bash, because dash cannot name a descriptor above 9.
 */
export function closeInheritedFds(): string[] {
  return [
    'bash',
    '-c',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own parameter expansion
    'for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done; exec "$@"',
    'berth-close-fds',
  ];
}

/** Whether `path` is `root` or lies inside it. */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root === '/' ? '/' : `${root}${sep}`);
}

/**
 * The host's system folders every bwrap view shows read-only: `/usr`, `/etc`, and `/bin`, `/lib*`,
 * `/sbin` (links into `/usr` where the system is usr-merged); `/opt` too with `opt`.
 */
function systemMounts(opt: boolean): string[] {
  const args = ['--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc'];
  for (const name of SYSTEM_LINKS) {
    if (usrMerged(name)) args.push('--symlink', `usr/${name}`, `/${name}`);
    else args.push('--ro-bind-try', `/${name}`, `/${name}`);
  }
  if (opt) args.push('--ro-bind-try', '/opt', '/opt');
  return args;
}

const SYSTEM_LINKS = ['bin', 'lib', 'lib64', 'lib32', 'sbin'] as const;

/** The host folders the host view shows whole (read-only), so nothing below them needs making. */
const SYSTEM_ROOTS = ['/usr', '/etc', '/opt', ...SYSTEM_LINKS.map((name) => `/${name}`)];

/** Whether every bwrap view (the minimal one too) shows `path` already: it is under `/usr`, `/etc`, `/bin`, `/lib*` or `/sbin`. */
export function systemFoldersShow(path: string): boolean {
  return SYSTEM_ROOTS.some((root) => root !== '/opt' && within(path, root));
}

/**
 * Toolchain homes under HOME that a PATH entry inside them shows whole (pyenv's shims need its
 * versions, cargo's proxies need rustup's toolchains): any other PATH entry under HOME is shown by
 * itself, so `~/code/x/node_modules/.bin` or `~/.local/bin` never shows `~/code` or `~/.local`
 * (a reviewer's finding, session 9).
 */
const TOOLCHAIN_HOMES: Record<string, readonly string[]> = {
  '.pyenv': ['.pyenv'],
  '.cargo': ['.cargo', '.rustup'],
  '.rustup': ['.rustup'],
  '.nvm': ['.nvm'],
  '.asdf': ['.asdf'],
  '.rbenv': ['.rbenv'],
  '.sdkman': ['.sdkman'],
  '.volta': ['.volta'],
  '.bun': ['.bun'],
  '.deno': ['.deno'],
  go: ['go'],
};

/**
 * `--tmpfs HOME` (when HOME is a folder of its own) plus read-only binds of the absolute PATH
 * entries the system folders do not show: an entry inside a known toolchain home under HOME
 * (TOOLCHAIN_HOMES) by that home's folders, the `bin` of a Homebrew prefix by the prefix, any
 * other by itself; then the toolchain folders outside PATH (`toolchainFolders`). Entries under
 * /tmp stay hidden (the private /tmp replaces the host's). Returns the tmpfs's arguments and the
 * folders to show.
 */
function pathMounts(
  spec: HostViewSpec,
  tmpfsBytes: number,
): { args: string[]; home?: string; shown: string[] } {
  const env = spec.env ?? process.env;
  const rawHome = env.HOME;
  const home =
    rawHome &&
    isAbsolute(rawHome) &&
    rawHome !== '/' &&
    !within(rawHome, '/tmp') &&
    !SYSTEM_ROOTS.some((root) => within(rawHome, root))
      ? rawHome
      : undefined;
  // World-writable like /tmp, so tools that keep caches in HOME still work.
  const args = home ? ['--perms', '1777', '--size', String(tmpfsBytes), '--tmpfs', home] : [];
  const shown: string[] = [];
  const show = (top: string) => {
    if (shown.some((dir) => within(top, dir))) return;
    try {
      accessSync(top, constants.R_OK);
      if (!statSync(top).isDirectory()) return;
    } catch {
      return;
    }
    shown.push(top);
  };
  for (const entry of (env.PATH ?? '').split(':')) {
    if (!entry || !isAbsolute(entry) || within(entry, '/tmp')) continue;
    if (SYSTEM_ROOTS.some((root) => within(entry, root))) continue;
    let tops = [entry];
    if (home) {
      const rel = relative(home, entry);
      if (rel === '') continue;
      const first = rel.split(sep)[0] as string;
      if (!rel.startsWith('..') && !isAbsolute(rel) && TOOLCHAIN_HOMES[first])
        tops = (TOOLCHAIN_HOMES[first] as readonly string[]).map((name) => `${home}${sep}${name}`);
    }
    const brew = homebrewPrefix(entry, home);
    if (brew) tops = [brew];
    for (const top of tops) show(top);
  }
  for (const dir of toolchainFolders(env, home)) show(dir);
  return { args, ...(home ? { home } : {}), shown };
}

/**
 * The Homebrew prefix (`/home/linuxbrew/.linuxbrew`, `~/.linuxbrew`) whose `bin` or `sbin` the PATH
 * entry is: its commands are links into `../Cellar` and `../opt`, so the prefix is shown whole. A
 * prefix is a folder holding `Cellar`; never HOME itself or a folder above it.
 */
function homebrewPrefix(entry: string, home: string | undefined): string | undefined {
  if (!['bin', 'sbin'].includes(entry.split(sep).at(-1) as string)) return undefined;
  const prefix = dirname(entry);
  if (prefix === '/' || (home && within(home, prefix))) return undefined;
  try {
    return lstatSync(join(prefix, 'Cellar')).isDirectory() ? prefix : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Toolchain folders outside PATH that a test run needs, shown read-only, each only what the
 * toolchain reads (reviewer, session 10; docs/security.md lists what is not shown and why):
 * - Maven's local repository `~/.m2/repository` (jars and poms): never `~/.m2` itself, whose
 *   `settings.xml` and `settings-security.xml` hold server passwords;
 * - Python's user site-packages, `lib/pythonX.Y/site-packages` under `PYTHONUSERBASE` (default
 *   `~/.local`): a `pip install --user` pytest; never the rest of `~/.local` (`share/` holds
 *   tools' logins);
 * - Go's module cache `GOMODCACHE` (default `pkg/mod` under GOPATH's first entry, default `~/go`):
 *   downloaded modules; never the rest of GOPATH (`src/`). (`GOCACHE` is the trial's own.)
 * Under HOME a folder counts only when no part of its path below HOME is a link (a link there
 * could point the view at any folder); none is ever HOME or a folder above it.
 */
function toolchainFolders(env: Record<string, string | undefined>, home: string | undefined): string[] {
  const out: string[] = [];
  const add = (path: string | undefined) => {
    if (!path || !isAbsolute(path) || within(path, '/tmp')) return;
    if (SYSTEM_ROOTS.some((root) => within(path, root))) return;
    if (home && within(home, path)) return;
    if (home && within(path, home) && !plainBelow(home, path)) return;
    out.push(path);
  };
  if (home) add(join(home, '.m2', 'repository'));
  const userBase = env.PYTHONUSERBASE || (home ? join(home, '.local') : undefined);
  if (userBase && isAbsolute(userBase)) {
    let names: string[] = [];
    try {
      names = readdirSync(join(userBase, 'lib')).filter((name) => /^python\d+\.\d+t?$/.test(name));
    } catch {
      // no lib/ folder
    }
    for (const name of names.sort()) add(join(userBase, 'lib', name, 'site-packages'));
  }
  const gopath = (env.GOPATH ?? '').split(':')[0] || (home ? join(home, 'go') : undefined);
  add(env.GOMODCACHE || (gopath && isAbsolute(gopath) ? join(gopath, 'pkg', 'mod') : undefined));
  return out;
}

/** Whether every part of `path` below `top` is a folder, not a link (`lstat`, nothing followed). */
function plainBelow(top: string, path: string): boolean {
  let dir = top;
  for (const part of relative(top, path).split(sep)) {
    dir = join(dir, part);
    try {
      if (!lstatSync(dir).isDirectory()) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Where `/etc/resolv.conf` leads out of the folders the host view shows (Ubuntu's
 * systemd-resolved links it to `../run/systemd/resolve/stub-resolv.conf`, and `/run` is not
 * shown): the file to show read-only and the path the first link out names, so a command allowed
 * the network still resolves names. Undefined when the file is a plain one or within the shown
 * folders.
 */
export function resolverFile(link = '/etc/resolv.conf'): { source: string; at: string } | undefined {
  let path = link;
  for (let hop = 0; hop < 8; hop++) {
    let target: string;
    try {
      if (!lstatSync(path).isSymbolicLink()) return undefined;
      target = resolve(dirname(path), readlinkSync(path));
    } catch {
      return undefined;
    }
    if (!SYSTEM_ROOTS.some((root) => within(target, root))) {
      try {
        const source = realpathSync(target);
        return statSync(source).isFile() ? { source, at: target } : undefined;
      } catch {
        return undefined;
      }
    }
    path = target;
  }
  return undefined;
}

/** The argv prefix running a command in `method`'s host-view sandbox. */
export function hostViewPrefix(method: IsolationMethod, spec: HostViewSpec): IsolationPrefix {
  const noNetwork = spec.noNetwork ?? true;
  const net = noNetwork ? ['--unshare-net'] : [];
  const drop = dropTo(spec.identity);
  const tmpfsBytes = spec.tmpfsBytes ?? DEFAULT_TMPFS_BYTES;
  if (method === 'bwrap') {
    // An allow-list of the host, never `/`: the dataset, a gold patch or a key file lying
    // anywhere else on the host stays out of reach (docs/security.md).
    const prefix = [
      'bwrap',
      ...systemMounts(true),
      '--dev',
      '/dev',
      ...devShm(tmpfsBytes),
      '--proc',
      '/proc',
    ];
    // The private /tmp is world-writable with the sticky bit, like the host's.
    prefix.push('--perms', '1777', '--size', String(tmpfsBytes), '--tmpfs', '/tmp');
    const paths = pathMounts(spec, tmpfsBytes);
    prefix.push(...paths.args);
    // bwrap would make the missing folders above a bind with mode 0700 (root's): make them 0755
    // first, so the sandbox uid can walk down to the bound folder (the writable folder too: a
    // trial root deeper than /tmp/<name>, e.g. a worker's <root>/tmp/).
    const tmpfsRoots = ['/tmp', ...(paths.home ? [paths.home] : [])];
    const bound = ['/dev', '/proc', ...SYSTEM_ROOTS];
    const made = new Set<string>(tmpfsRoots);
    const makeAbove = (path: string) => {
      const above: string[] = [];
      for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
        // A folder made already, or the host's own: the folders above it are in place too.
        if (made.has(dir) || bound.some((shown) => within(dir, shown))) break;
        above.unshift(dir);
      }
      for (const dir of above) {
        made.add(dir);
        prefix.push('--perms', '0755', '--dir', dir);
      }
      bound.push(path);
    };
    for (const dir of paths.shown) {
      makeAbove(dir);
      prefix.push('--ro-bind', dir, dir);
    }
    const resolver = noNetwork ? undefined : resolverFile();
    if (resolver) {
      makeAbove(resolver.at);
      prefix.push('--ro-bind', resolver.source, resolver.at);
    }
    if (spec.writable) {
      makeAbove(spec.writable);
      prefix.push('--bind', spec.writable, spec.writable);
    }
    for (const bind of spec.binds ?? []) {
      makeAbove(bind.path);
      prefix.push(bind.writable ? '--bind' : '--ro-bind', bind.path, bind.path);
    }
    if (spec.alias) prefix.push('--symlink', spec.alias.of, spec.alias.at, '--chdir', spec.alias.cwd);
    // Own IPC and UTS namespaces: System V shared memory outlives every process and is open to
    // any uid by its mode, so a shared namespace let a command keep memory on the host past its
    // limit and pass a later trial what it saw (breaker10 F1).
    prefix.push(
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      ...net,
      '--die-with-parent',
      '--new-session',
      '--',
      ...drop,
    );
    // bwrap runs as berth's user (root: it can still bind the toolchain under /root), and
    // setpriv drops to the unprivileged uid inside, with no capabilities left.
    return { prefix, spawnAs: undefined };
  }
  const ns = [
    '--pid',
    '--ipc',
    '--uts',
    '--fork',
    '--kill-child',
    '--mount-proc',
    ...(noNetwork ? ['--net'] : []),
  ];
  if (method === 'unshare')
    return { prefix: ['unshare', ...ns, '--', ...LO_UP, ...drop], spawnAs: undefined };
  return { prefix: ['unshare', '--map-root-user', ...ns, '--', ...LO_UP], spawnAs: undefined };
}

/**
 * bwrap's `--dev` is a tmpfs of half the host's memory with a world-writable `shm/`: a size-capped
 * tmpfs on `/dev/shm` keeps a command from filling the host's memory there.
 */
function devShm(bytes: number): string[] {
  return ['--perms', '1777', '--size', String(bytes), '--tmpfs', '/dev/shm'];
}

function usrMerged(name: string): boolean {
  try {
    return lstatSync(`/${name}`).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The isolation kinds of the minimal view (`none`: no namespaces). */
export type MinimalKind = 'bwrap' | 'unshare' | 'none';

/** The argv prefix running a command in the minimal view (empty for `none`). */
export function minimalViewPrefix(kind: MinimalKind, spec: MinimalViewSpec): string[] {
  if (kind === 'unshare')
    return ['unshare', '--user', '--net', '--pid', '--ipc', '--uts', '--fork', '--kill-child', '--'];
  if (kind === 'none') return [];
  const args = spec.privileged
    ? ['bwrap', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try']
    : ['bwrap', '--unshare-all'];
  if (spec.mapTo && !spec.privileged)
    args.push('--uid', String(spec.mapTo.uid), '--gid', String(spec.mapTo.gid));
  args.push('--die-with-parent', '--new-session');
  args.push(...systemMounts(false));
  const tmpfsBytes = spec.tmpfsBytes ?? DEFAULT_TMPFS_BYTES;
  args.push('--dev', '/dev', ...devShm(tmpfsBytes), '--proc', '/proc');
  args.push('--size', String(tmpfsBytes), '--tmpfs', '/tmp');
  const hidden = new Set<string>();
  for (const path of spec.readOnly ?? []) {
    // A path below a folder the dropped uid cannot enter (root's 0700 home with berth's cache): that
    // folder becomes an empty tmpfs with 0755 folders down to the path (bwrap would make them 0700).
    if (spec.privileged) args.push(...reachable(path, spec.privileged.dropTo.uid, hidden));
    args.push('--ro-bind', path, path);
  }
  for (const { source, target } of spec.readOnlyAt ?? []) args.push('--ro-bind', source, target);
  const at = spec.at ?? spec.writable;
  if (spec.privateBytes !== undefined && at)
    args.push('--size', String(spec.privateBytes), '--tmpfs', at, '--chdir', at);
  else if (spec.writable && spec.writable !== '/' && at)
    args.push('--bind', spec.writable, at, '--chdir', at);
  if (spec.sealed) args.push('--remount-ro', '/dev', '--remount-ro', '/', '--as-pid-1');
  args.push('--');
  if (spec.privileged) args.push(...dropTo(spec.privileged.dropTo));
  return args;
}

/**
 * bwrap arguments that make `path` reachable by `uid` (not its owner, no groups): the first folder
 * above it that others cannot enter is replaced by an empty tmpfs (nothing in it was reachable),
 * and the folders below it down to `path` are made 0755 (bwrap would make them 0700), as are
 * those below the sandbox's own /tmp, and, when every folder above it may be entered on the host,
 * those above it outside the system folders (`/work/main/node_modules` above Kotlin's
 * distribution: once `/` was shown whole they were the host's own).
 */
function reachable(path: string, uid: number, hidden: Set<string>): string[] {
  const parts = path.split('/').filter(Boolean);
  const below = (i: number) =>
    parts
      .slice(i + 1, -1)
      .flatMap((_, k) => ['--perms', '0755', '--dir', `/${parts.slice(0, i + 2 + k).join('/')}`]);
  for (let i = 0; i < parts.length - 1; i++) {
    const dir = `/${parts.slice(0, i + 1).join('/')}`;
    if (dir === '/tmp') return below(i);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(dir);
    } catch {
      return [];
    }
    if (st.uid === uid || (st.mode & 0o001) !== 0) continue;
    const args = hidden.has(dir) ? [] : ['--perms', '0755', '--tmpfs', dir];
    hidden.add(dir);
    return [...args, ...below(i)];
  }
  return systemFoldersShow(path) ? [] : below(-1);
}

/**
 * The probe command: it checks the namespace really has no route out (only `lo` may exist) and
 * that the command is a low pid in a fresh pid namespace.
 */
function probeArgv(prefix: string[]): string[] {
  return [...prefix, 'sh', '-c', 'cat /proc/net/dev; echo "pid $$"'];
}

const PROBE_TIMEOUT_MS = 10_000;

/** What the probe's end says: the reason the command is not isolated, or undefined when it is. */
function probeVerdict(out: {
  error?: Error | null;
  status: number | null;
  signal?: string | null;
  stdout: string;
  stderr: string;
}): string | undefined {
  if (out.error) return out.error.message;
  if (out.status !== 0) return (out.stderr || `exit ${out.status ?? out.signal}`).split('\n')[0];
  const lines = out.stdout.split('\n');
  const pid = Number(lines.find((l) => l.startsWith('pid '))?.slice(4));
  if (!(pid > 0 && pid < 10)) return `no own pid namespace (pid ${pid})`;
  const interfaces = lines
    .filter((l) => l.includes(':') && !l.includes('|'))
    .map((line) => line.split(':')[0]?.trim())
    .filter((name) => name && name !== 'lo');
  return interfaces.length === 0 ? undefined : `network interfaces still visible: ${interfaces.join(', ')}`;
}

/** Runs a probe command; the reason it fails to isolate, or undefined when it does. */
function probe(prefix: string[], spawnAs: SandboxIdentity): string | undefined {
  const argv = probeArgv(prefix);
  const out = spawnSync(argv[0] as string, argv.slice(1), {
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
    cwd: '/',
    ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
  });
  return probeVerdict(out);
}

/** The same probe without blocking: other work goes on while the sandbox starts. */
function probeAsync(prefix: string[], spawnAs: SandboxIdentity): Promise<string | undefined> {
  const argv = probeArgv(prefix);
  return new Promise((resolve) => {
    execFile(
      argv[0] as string,
      argv.slice(1),
      {
        encoding: 'utf8',
        timeout: PROBE_TIMEOUT_MS,
        cwd: '/',
        ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
      },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        const spawnFailed = error && typeof error.code !== 'number' && !error.signal;
        resolve(
          probeVerdict({
            ...(spawnFailed ? { error } : {}),
            status,
            signal: error?.signal ?? null,
            stdout,
            stderr,
          }),
        );
      },
    );
  });
}

const checked = new Map<string, string | undefined>();

/** Why `method` does not isolate the host view here, or undefined when it works (probed once per process). */
export function checkHostMethod(method: IsolationMethod): string | undefined {
  const key = `host:${method}`;
  if (checked.has(key)) return checked.get(key);
  let problem: string | undefined;
  if (method === 'unshare' && !isRoot) problem = 'needs root';
  else if (method === 'unshare-user' && isRoot) problem = 'berth runs as root: use unshare';
  else {
    // The identity of slot 32 (the first local slot) stands for every local slot.
    const { prefix, spawnAs } = hostViewPrefix(method, { identity: slotIdentity(32) });
    problem = probe(prefix, spawnAs);
  }
  checked.set(key, problem);
  return problem;
}

/**
 * `checkMinimalKind` without blocking the event loop (`berth eval` probes while it reads its
 * files); its answer is kept for `checkMinimalKind`.
 */
export async function checkMinimalKindAsync(kind: Exclude<MinimalKind, 'none'>): Promise<string | undefined> {
  const key = `minimal:${kind}`;
  if (checked.has(key)) return checked.get(key);
  const problem = await probeAsync(minimalViewPrefix(kind, { writable: '/' }), slotIdentity(0));
  checked.set(key, problem);
  return problem;
}

/** Why `kind` does not isolate the minimal view here, or undefined when it works (probed once per process). */
export function checkMinimalKind(kind: Exclude<MinimalKind, 'none'>): string | undefined {
  const key = `minimal:${kind}`;
  if (checked.has(key)) return checked.get(key);
  const problem = probe(minimalViewPrefix(kind, { writable: '/' }), slotIdentity(0));
  checked.set(key, problem);
  return problem;
}

export interface IsolationProbe {
  /** The method that works here, or undefined when commands cannot be isolated. */
  method?: IsolationMethod;
  /** Why each method failed, for the record. */
  notes: string[];
}

let hostProbe: IsolationProbe | undefined;

/**
 * The first host-view method that works on this machine (cached).
 * `BERTH_NO_ISOLATION=1` disables isolation; `BERTH_ISOLATION=bwrap|unshare|unshare-user`
 * asks for one method (none is used when it does not work here).
 */
export function probeIsolation(): IsolationProbe {
  if (hostProbe) return hostProbe;
  const notes: string[] = [];
  if (process.env.BERTH_NO_ISOLATION === '1') {
    hostProbe = { notes: ['disabled by BERTH_NO_ISOLATION=1'] };
    return hostProbe;
  }
  const wanted = process.env.BERTH_ISOLATION as IsolationMethod | undefined;
  const methods = wanted && ISOLATION_METHODS.includes(wanted) ? [wanted] : ISOLATION_METHODS;
  for (const method of methods) {
    const problem = checkHostMethod(method);
    if (problem === undefined) {
      hostProbe = { method, notes };
      return hostProbe;
    }
    notes.push(`${method}: ${problem}`);
  }
  hostProbe = { notes };
  return hostProbe;
}
