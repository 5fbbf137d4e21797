/**
 * Install once, materialise once (issue 18): the local environment's repository as it stands
 * after materialising (files, base commit) and the dataset's install step, kept once per
 * (snapshot content hash, install command, platform) under `<cache root>/installs/<key>/`, with a
 * warm Go build cache beside it for Go repositories. Each later trial starts from the entry in its
 * own folder: what a trial writes (the agent, the tests) lands in that folder, never in the
 * entry, so no trial can change what the next one starts from.
 *
 * Copy-on-write where it can (overlay.ts): as root, with the trial folder a size-capped tmpfs
 * (src/sandbox/capped-folder.ts), the entry's `repo/` is the read-only lower layer of an overlay
 * mounted on the trial's repository, seen as the trial's uid's through an idmapped mount; its
 * upper folder is in the trial's tmpfs, so a trial pays only for what it changes and writes count
 * against its cap. Elsewhere (not root, `--keep-environments`, no python3, a kernel or file system
 * that refuses, `BERTH_INSTALL_OVERLAY=0`) the entry is copied as the trial's uid (`tar --owner`,
 * no `chown -R` after it); neither hard links nor reflinks cross into the tmpfs. Which one a trial
 * got is its `installCache.method` (recorded in the trial's result). Entries are written by berth
 * (root) before any agent code ran, owned by berth, in a folder only berth can read (0700); the
 * sandbox sees the host read-only and no path leads to an overlay's lower layer.
 *
 * Layout of an entry: `repo/` (the working folder with its `.git`), `go-build/` (GOCACHE, when
 * warmed: compiled at the base commit, what every trial's agent starts from), `go-verify/` (the
 * verifier's Go build cache: `go-build/` plus what the go tool compiled for the patched and
 * test-patched repositories of earlier trials, see {@link mergeGoCache}), `go-verify-filled/`
 * (one empty file per repository content already compiled into `go-verify/`), `entry.json`
 * ({@link InstallEntry}).
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { link, lstat, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import type { EnvironmentSpec } from '../../tasks/task.ts';
import { cacheRoot } from '../../util/cache.ts';
import { mountOverlays, type OverlaySpec, overlayUpper, unmountAll } from './overlay.ts';

/** Bump when an entry's layout or meaning changes: old entries are then never read. */
const FORMAT = 5;

/** What `entry.json` records. */
export interface InstallEntry {
  format: number;
  /** The base commit berth made of the snapshot (the same in every copy). */
  baseCommit: string;
  /** The install command that ran, `''` for none. */
  install: string;
  /** Whether `go-build/` holds a warm Go build cache. */
  goCache: boolean;
  /** ISO time it was written. */
  createdAt: string;
}

/** The folder holding every entry: `<cache root>/installs` (`berth clean --cache` removes it). */
export function installsDir(): string {
  return join(cacheRoot(), 'installs');
}

/** Whether the install cache is on (`BERTH_INSTALL_CACHE=0` turns it off, e.g. to measure without it). */
export function installCacheEnabled(): boolean {
  return process.env.BERTH_INSTALL_CACHE !== '0';
}

/**
 * Whether a trial's repository may be an overlay on the entry (default) rather than a copy:
 * `BERTH_INSTALL_OVERLAY=0` copies (to compare the two, or where an overlay misbehaves).
 */
export function installOverlayEnabled(): boolean {
  return process.env.BERTH_INSTALL_OVERLAY !== '0';
}

/**
 * The entry's key: sha256 of the snapshot's content (or the mirror's repository and base commit),
 * the install command, the environment's variables and the platform (OS, CPU, Node version: an
 * install may build native code).
 * @returns undefined for an environment that is not local or whose repository is a host folder.
 */
export function installCacheKey(spec: EnvironmentSpec, env?: Record<string, string>): string | undefined {
  if (spec.kind !== 'local') return undefined;
  const hash = createHash('sha256');
  // The environment's own variables (Harbor's `[environment] env`) may change what an install does.
  const vars = Object.entries(env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (vars.length > 0) hash.update(`\0env\0${JSON.stringify(vars)}`);
  hash.update(
    JSON.stringify({ format: FORMAT, platform: `${process.platform}-${process.arch}-${process.version}` }),
  );
  hash.update('\0install\0');
  hash.update(spec.install?.trim() ?? '');
  if (spec.snapshot) {
    const { files, binaryFiles = {}, symlinks = {}, executables = [] } = spec.snapshot;
    for (const [kind, record] of [
      ['f', files],
      ['b', binaryFiles],
      ['l', symlinks],
    ] as const) {
      for (const path of Object.keys(record).sort()) {
        hash.update(`\0${kind}\0${path}\0`);
        hash.update(record[path] as string);
      }
    }
    hash.update(`\0x\0${[...executables].sort().join('\0')}`);
  } else if (spec.folder) {
    // A folder on the host has no content hash to key on: it is copied in every trial.
    return undefined;
  } else if (spec.repo && spec.baseCommit) {
    hash.update(`\0git\0${spec.repo}\0${spec.baseCommit}`);
  } else return undefined;
  return hash.digest('hex');
}

/** The owner of every file of a copy (default root, berth). */
export type CopyOwner = { uid: number; gid: number } | undefined;

/**
 * Copies the contents of `from` into the existing folder `to`: links as links, modes, times and
 * hard links kept, every file owned by `owner` (default root, berth) in the copy, `to` itself
 * included; nothing is followed. A `tar` pipe: two processes, on a loaded 2-core machine 0.9–2 s
 * for 250 MB in 29,000 files where `cp -R` took 5–10 s.
 */
async function copyTree(from: string, to: string, owner?: CopyOwner) {
  // NAME:ID, so the id is never read as a name (the name is not stored: --numeric-owner).
  const create = [`--owner=berth:${owner?.uid ?? 0}`, `--group=berth:${owner?.gid ?? 0}`, '--numeric-owner'];
  await execa('bash', [
    '-c',
    'set -o pipefail; from=$1 to=$2; shift 2; tar -C "$from" "$@" -cf - . | tar -C "$to" --numeric-owner -xpf -',
    'bash',
    from,
    to,
    ...create,
  ]);
}

/** The entry of `key`, if complete. */
export async function readEntry(key: string): Promise<InstallEntry | undefined> {
  try {
    const entry = JSON.parse(await readFile(join(installsDir(), key, 'entry.json'), 'utf8')) as InstallEntry;
    return entry.format === FORMAT && typeof entry.baseCommit === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}

/** How a trial's repository was made from an entry, and the mounts to undo at stop. */
export interface Restored {
  /** `overlay`: copy-on-write on the entry; `copy`: a copy of it. */
  method: 'overlay' | 'copy';
  /** Why not an overlay, when one was asked for and could not be mounted. */
  note?: string;
  /** Mount points to unmount (with {@link unmountAll}) before the trial folder is removed. */
  mounts: string[];
  /**
   * The entry's verifier Go build cache seen copy-on-write (with the overlay, when the entry has
   * one): `cache` (the merged folder, the trial's uid's) inside `gate` (root's, 0700 until the
   * test run: no agent reaches it), and `upper` (what the go tool wrote into it).
   */
  goVerify?: { gate: string; cache: string; upper: string };
  /**
   * With the overlay: the repository overlay's upper folder (root's, 0700), which holds all that
   * the trial changed in the entry's `repo/` (files written, whiteouts for removals).
   */
  repoUpper?: string;
}

/**
 * Makes `workdir` (an empty folder) the entry's repository for one trial, owned by `owner`, and
 * `goCache` the entry's warm Go build cache when it has one: copy-on-write when `overlay` names a
 * scratch folder (a new path on the trial's own capped tmpfs) and the overlays can be mounted
 * (overlay.ts, one process for all), else copies. With the overlay, an entry's verifier Go build
 * cache is mounted too, in `overlay.goVerify` (a new path: see {@link Restored.goVerify});
 * without, the verifier copies it ({@link copyVerifierGoCache}).
 */
export async function restoreEntry(
  key: string,
  entry: InstallEntry,
  workdir: string,
  goCache: string,
  options: { owner?: CopyOwner; overlay?: { scratch: string; goVerify?: string } } = {},
): Promise<Restored> {
  const dir = join(installsDir(), key);
  const restored: Restored = { method: 'copy', mounts: [] };
  if (entry.goCache) await mkdir(goCache, { recursive: true });
  if (options.overlay) {
    const { scratch, goVerify } = options.overlay;
    const specs: OverlaySpec[] = [
      { lower: join(dir, 'repo'), target: workdir, scratch: join(scratch, 'repo') },
    ];
    if (entry.goCache)
      specs.push({ lower: join(dir, 'go-build'), target: goCache, scratch: join(scratch, 'go') });
    const verify =
      entry.goCache && goVerify !== undefined && existsSync(join(dir, 'go-verify'))
        ? { gate: goVerify, cache: join(goVerify, 'cache'), upper: overlayUpper(join(goVerify, 'o')) }
        : undefined;
    if (verify) {
      await mkdir(verify.gate, { mode: 0o700 });
      await mkdir(verify.cache);
      specs.push({ lower: join(dir, 'go-verify'), target: verify.cache, scratch: join(verify.gate, 'o') });
    }
    await mkdir(scratch, { mode: 0o700 });
    const why = await mountOverlays(specs, options.owner);
    if (why === undefined) {
      restored.method = 'overlay';
      restored.mounts.push(...specs.map((spec) => spec.target));
      restored.repoUpper = overlayUpper(join(scratch, 'repo'));
      if (verify) restored.goVerify = verify;
      return restored;
    }
    restored.note = `overlay not mounted (${why}): copied`;
    if (verify) await rm(verify.gate, { recursive: true, force: true });
  }
  await copyTree(join(dir, 'repo'), workdir, options.owner);
  if (entry.goCache) await copyTree(join(dir, 'go-build'), goCache, options.owner);
  return restored;
}

/**
 * Saves `workdir` (and `goCache` when given and present) as the entry of `key`. Written to a
 * temporary folder and renamed into place, so a reader sees a whole entry or none; when another
 * trial saved the same key meanwhile, its entry is kept.
 */
export async function saveEntry(
  key: string,
  workdir: string,
  goCache: string | undefined,
  meta: Omit<InstallEntry, 'format' | 'createdAt' | 'goCache'>,
): Promise<void> {
  const dir = installsDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const final = join(dir, key);
  if (existsSync(final)) return;
  const temporary = join(dir, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(join(temporary, 'repo'), { recursive: true, mode: 0o700 });
    await copyTree(workdir, join(temporary, 'repo'));
    const warm = goCache !== undefined && existsSync(goCache);
    if (warm) {
      await mkdir(join(temporary, 'go-build'));
      await copyTree(goCache, join(temporary, 'go-build'));
      await mkdir(join(temporary, 'go-verify'));
      await copyTree(goCache, join(temporary, 'go-verify'));
      await mkdir(join(temporary, 'go-verify-filled'));
    }
    const entry: InstallEntry = {
      format: FORMAT,
      ...meta,
      goCache: warm,
      createdAt: new Date().toISOString(),
    };
    await writeFile(join(temporary, 'entry.json'), `${JSON.stringify(entry, null, 2)}\n`);
    await rename(temporary, final);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Another trial won the race: its entry is as good as ours.
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}

/** A file of Go's build cache: `<2 hex>/<64 hex>-a` (an action's index entry) or `-d` (an output). */
const GO_CACHE_FILE = /^[0-9a-f]{64}-[ad]$/;
/** A repository content hash naming a `go-verify-filled/` marker. */
const CONTENT_HASH = /^[0-9a-f]{64}$/;
/** At most this many bytes are added to `go-verify/` by one merge (what is beyond is left out). */
export const MERGE_CAP_BYTES = 256 << 20;
/** `go-verify/` grows no further than this many bytes (nothing is evicted: past it, no merge adds). */
export const GO_VERIFY_CAP_BYTES = 4 * 2 ** 30;

/** Bytes of the regular files one level down in `dir` (Go's `xx/` layout), links not followed. */
async function goCacheBytes(dir: string): Promise<number> {
  let total = 0;
  for (const sub of await readdir(dir).catch(() => [] as string[])) {
    for (const name of await readdir(join(dir, sub)).catch(() => [] as string[])) {
      const stat = await lstat(join(dir, sub, name)).catch(() => undefined);
      if (stat?.isFile()) total += stat.size;
    }
  }
  return total;
}

/**
 * Copies the entry's verifier Go build cache (`go-verify/`) into the existing empty folder `to`,
 * owned by `owner`: the build cache of one trial's test run, which nothing of that trial can
 * write back into the entry.
 */
export async function copyVerifierGoCache(key: string, to: string, owner?: CopyOwner): Promise<void> {
  await copyTree(join(installsDir(), key, 'go-verify'), to, owner);
}

/** The repository contents already compiled into the entry's `go-verify/` (see {@link mergeGoCache}). */
export async function goCacheFilled(key: string): Promise<string[]> {
  const names = await readdir(join(installsDir(), key, 'go-verify-filled')).catch(() => [] as string[]);
  return names.filter((name) => CONTENT_HASH.test(name));
}

/**
 * Adds to the entry's `go-verify/` the files of Go's build cache `from` that it lacks (written
 * by the go tool alone, compiling a trial's repository before its tests ran: the caller's
 * promise), and marks `content` as compiled. Only names of Go's own layout are taken, only
 * regular files, opened without following links, never one already there (an entry is never
 * replaced), at most {@link MERGE_CAP_BYTES} in all and never past {@link GO_VERIFY_CAP_BYTES} for
 * the folder (`caps` lowers them, in bytes). Go's cache is content-addressed: an entry the go
 * tool made for sources X serves only a build of sources X; a file left out costs a later
 * trial a compile, never a verdict.
 * @returns how many files were added.
 */
export async function mergeGoCache(
  key: string,
  from: string,
  content: string,
  caps: { mergeBytes?: number; folderBytes?: number } = {},
): Promise<number> {
  const into = join(installsDir(), key, 'go-verify');
  if (!CONTENT_HASH.test(content) || !existsSync(into)) return 0;
  let added = 0;
  let bytes = 0;
  const folderCap = caps.folderBytes ?? GO_VERIFY_CAP_BYTES;
  const cap = Math.min(
    caps.mergeBytes ?? MERGE_CAP_BYTES,
    Math.max(0, folderCap - (await goCacheBytes(into))),
  );
  for (const sub of await readdir(from)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    const dir = join(from, sub);
    if (!(await lstat(dir)).isDirectory()) continue;
    for (const name of await readdir(dir)) {
      if (!GO_CACHE_FILE.test(name) || name.slice(0, 2) !== sub) continue;
      const target = join(into, sub, name);
      if (existsSync(target)) continue;
      const handle = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW).catch(
        () => undefined,
      );
      if (!handle) continue;
      try {
        const stat = await handle.stat();
        if (!stat.isFile() || bytes + stat.size > cap) continue;
        const data = await handle.readFile();
        bytes += data.length;
        await mkdir(join(into, sub), { recursive: true });
        const temporary = join(into, sub, `.${name}.${randomBytes(4).toString('hex')}`);
        await writeFile(temporary, data, { mode: 0o644, flag: 'wx' });
        // link(2) never replaces: a file another trial added meanwhile is kept.
        await link(temporary, target).then(
          () => added++,
          () => {},
        );
        await rm(temporary, { force: true });
      } finally {
        await handle.close();
      }
    }
  }
  await markGoCacheFilled(key, content);
  return added;
}

/** Marks the repository content `content` (a hash) as compiled into the entry's `go-verify/`. */
export async function markGoCacheFilled(key: string, content: string): Promise<void> {
  if (!CONTENT_HASH.test(content)) return;
  await mkdir(join(installsDir(), key, 'go-verify-filled'), { recursive: true });
  await writeFile(join(installsDir(), key, 'go-verify-filled', content), '');
}
