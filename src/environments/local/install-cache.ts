/**
 * Install once, materialise once (issue 18): the local environment's repository as it stands
 * after materialising (files, base commit) and the dataset's install step, kept once per
 * (snapshot content hash, install command, platform) under `<cache root>/installs/<key>/`, with a
 * warm Go build cache beside it for Go repositories. Each later trial starts from a copy of the
 * entry in its own folder: what a trial writes (the agent, the tests) lands in its copy, never in
 * the entry, so no trial can change what the next one starts from.
 *
 * A copy, not hard links: the trial folder is its own size-capped tmpfs (src/sandbox/capped-folder.ts),
 * and neither hard links nor reflinks cross file systems. (An overlay mount costs no copy, but the
 * trial's uid must own its files, and `chown -R` through an overlay copies every file up: slower
 * than the copy, measured.) Entries are written by berth (root) before any agent code ran, owned by berth, in a
 * folder only berth can read (0700); the sandbox sees the host read-only.
 *
 * Read-only layers: a top-level folder of the install's products that no test needs to write
 * (`node_modules`, see {@link READ_ONLY_LAYERS}) is not copied at all where the trial folder is a
 * capped tmpfs (berth as root): it is bind-mounted read-only from the entry into the trial's
 * copy (nothing, not even root in the sandbox, can write through it), and unmounted at stop.
 * The rest is copied as the trial's uid (`tar --owner`), so no `chown -R` walks it afterwards.
 *
 * Layout of an entry: `repo/` (the working folder with its `.git`), `go-build/` (GOCACHE, when
 * warmed), `entry.json` ({@link InstallEntry}).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import type { EnvironmentSpec } from '../../tasks/task.ts';
import { cacheRoot } from '../../util/cache.ts';

/** Bump when an entry's layout or meaning changes: old entries are then never read. */
const FORMAT = 2;

/**
 * Top-level folders of an installed repository that trials get read-only (bound from the entry,
 * never copied) when git ignores them and tracks no file in them: what `npm install` writes,
 * which a project's tests read and do not write.
 */
export const READ_ONLY_LAYERS = ['node_modules'] as const;

/** What `entry.json` records. */
export interface InstallEntry {
  format: number;
  /** The base commit berth made of the snapshot (the same in every copy). */
  baseCommit: string;
  /** The install command that ran, `''` for none. */
  install: string;
  /** Whether `go-build/` holds a warm Go build cache. */
  goCache: boolean;
  /** Top-level folders of `repo/` a trial may get as read-only layers ({@link READ_ONLY_LAYERS}). */
  layers: string[];
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
 * for 250 MB in 29,000 files where `cp -R` took 5–10 s. `exclude`: top-level names left out.
 */
async function copyTree(from: string, to: string, owner?: CopyOwner, exclude: readonly string[] = []) {
  // NAME:ID, so the id is never read as a name (the name is not stored: --numeric-owner).
  const create = [
    `--owner=berth:${owner?.uid ?? 0}`,
    `--group=berth:${owner?.gid ?? 0}`,
    '--numeric-owner',
    // Anchored: only the top-level folder of that name, never one deeper down.
    ...(exclude.length > 0 ? ['--anchored', ...exclude.map((name) => `--exclude=./${name}`)] : []),
  ];
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
    return entry.format === FORMAT && typeof entry.baseCommit === 'string' && Array.isArray(entry.layers)
      ? entry
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Copies the entry's repository into `workdir` and, when it has one, its Go build cache into
 * `goCache`, both owned by `owner`. With `layers`, the entry's read-only layers are left out of
 * the copy and bind-mounted read-only in its place (berth must be root; `workdir` on a file
 * system of the trial's own, unmounted with {@link unmountLayers} before it is removed).
 * @returns the mount points of the layers, to unmount at stop.
 */
export async function copyEntryInto(
  key: string,
  entry: InstallEntry,
  workdir: string,
  goCache: string,
  options: { owner?: CopyOwner; layers?: boolean } = {},
): Promise<string[]> {
  const dir = join(installsDir(), key);
  const layers = options.layers ? entry.layers : [];
  await copyTree(join(dir, 'repo'), workdir, options.owner, layers);
  if (entry.goCache) {
    await mkdir(goCache, { recursive: true });
    await copyTree(join(dir, 'go-build'), goCache, options.owner);
  }
  const mounted: string[] = [];
  try {
    for (const name of layers) {
      const point = join(workdir, name);
      await mkdir(point);
      // ro on the bind itself: no process of the trial, root in a sandbox included, writes through it.
      await execa('mount', ['--bind', '-o', 'ro,nosuid,nodev', '--', join(dir, 'repo', name), point]);
      mounted.push(point);
    }
  } catch (error) {
    await unmountLayers(mounted);
    throw error;
  }
  return mounted;
}

/** Unmounts layers mounted by {@link copyEntryInto} (lazily when busy); never throws. */
export async function unmountLayers(points: readonly string[]): Promise<void> {
  for (const point of [...points].reverse())
    await execa('umount', ['--', point]).catch(() => execa('umount', ['-l', '--', point]).catch(() => {}));
}

/**
 * The {@link READ_ONLY_LAYERS} of `workdir`: real folders (not links) that git ignores and holds
 * no tracked file of. Ignored, so no diff of the repository (an agent's patch) ever names a file
 * in them; a folder git would diff is copied like the rest.
 */
async function layersOf(workdir: string): Promise<string[]> {
  const git = (...args: string[]) =>
    execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args], {
      cwd: workdir,
      reject: false,
    });
  const layers: string[] = [];
  for (const name of READ_ONLY_LAYERS) {
    try {
      if (!lstatSync(join(workdir, name)).isDirectory()) continue;
    } catch {
      continue;
    }
    const ignored = await git('check-ignore', '-q', '--', name);
    const tracked = await git('ls-files', '-z', '--', name);
    if (ignored.exitCode === 0 && tracked.exitCode === 0 && tracked.stdout === '') layers.push(name);
  }
  return layers;
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
  meta: Omit<InstallEntry, 'format' | 'createdAt' | 'goCache' | 'layers'>,
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
    }
    const entry: InstallEntry = {
      format: FORMAT,
      ...meta,
      goCache: warm,
      // Read from the entry's own copy (root's, in berth's folder), not the trial's folder.
      layers: await layersOf(join(temporary, 'repo')),
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
