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
 * Layout of an entry: `repo/` (the working folder with its `.git`), `go-build/` (GOCACHE, when
 * warmed), `entry.json` ({@link InstallEntry}).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import type { EnvironmentSpec } from '../../tasks/task.ts';
import { cacheRoot } from '../../util/cache.ts';

/** Bump when an entry's layout or meaning changes: old entries are then never read. */
const FORMAT = 1;

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

/**
 * Copies the contents of `from` into the existing folder `to`: links as links, modes, times and
 * hard links kept, every file owned by root (berth) in the copy; nothing is followed. A `tar` pipe:
 * two processes, on a loaded 2-core machine 0.9–2 s for 250 MB in 29,000 files where `cp -R`
 * took 5–10 s.
 */
async function copyTree(from: string, to: string): Promise<void> {
  await execa('bash', [
    '-c',
    'set -o pipefail; tar -C "$1" --owner=0 --group=0 --numeric-owner -cf - . | tar -C "$2" -xpf -',
    'bash',
    from,
    to,
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

/** Copies the entry's repository into `workdir` and, when it has one, its Go build cache into `goCache`. */
export async function copyEntryInto(key: string, entry: InstallEntry, workdir: string, goCache: string) {
  const dir = join(installsDir(), key);
  await copyTree(join(dir, 'repo'), workdir);
  if (entry.goCache) {
    await mkdir(goCache, { recursive: true });
    await copyTree(join(dir, 'go-build'), goCache);
  }
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
