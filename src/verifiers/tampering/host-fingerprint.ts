/**
 * The fingerprint of test and runner files (run-check.ts) taken by berth itself where the
 * repository is a host folder (the local environment), instead of by a shell in the sandbox:
 * no process per file, and, after the tests, no sandboxed command at all when git's list of
 * runner files cannot have changed.
 *
 * - The files: the test patch's files and every file with a runner file's name the walk finds
 *   (`listingState`), and git's list of runner files (`runnerListingScript`, run in the
 *   sandbox) only when that walk was not whole (judge.ts `beforeRun`).
 * - Each file's value as run-check.ts's `parseFingerprints` gives it: a regular file's SHA-256
 *   with its inode and status change time (nanoseconds), a link's target's hash; read by berth
 *   with no-follow opens below the repository (src/util/safe-fs.ts). No untrusted process is
 *   running then: every command of a local environment is killed with its pid namespace and
 *   cgroup when it ends.
 * - After the tests, git's list is taken again (a sandboxed command) only when it may differ:
 *   a file with a runner file's name appeared (a walk of the repository, node_modules and .git
 *   left out, never following a link), or what decides git's ignore rules and tracked files
 *   changed (a `.gitignore`, `.git/info/exclude`, `.git/config`, the names and flags of
 *   `.git/index`'s entries, `.git/HEAD`), or
 *   the walk could not be trusted to be whole (too many entries, a name that is not UTF-8, a
 *   `.git` that is not a folder, a link among those files, a configuration that includes other
 *   files or names its own excludes file). Otherwise git's list is the one taken before.
 */
import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import PQueue from 'p-queue';
import picomatch from 'picomatch';
import {
  type FingerprintEntry,
  findBeneath,
  fingerprintBeneath,
  readFileBeneath,
  UnsafePathError,
} from '../../util/safe-fs.ts';
import { declaresPytestPlugin, isEntryPoints, PLUGIN_MARK, RUNNER_GLOBS } from './run-check.ts';

/** Entries the walk reads at most; past it, git's list is taken again after the tests. */
export const MAX_WALK_ENTRIES = 200_000;

/** git's own files that decide what `git ls-files -co --exclude-standard` lists (besides `.gitignore`s). */
const GIT_STATE = ['.git/info/exclude', '.git/config', '.git/index', '.git/HEAD'];

const isRunnerFile = picomatch([...RUNNER_GLOBS], { dot: true });
const isIgnoreFile = (path: string) => path === '.gitignore' || path.endsWith('/.gitignore');

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A path's fingerprint value (run-check.ts's form), or undefined when nothing is there. */
function fingerprintValue(entry: FingerprintEntry): string | undefined {
  switch (entry.kind) {
    case 'file':
      return `${entry.sha256} ${entry.ino}_${entry.ctimeNs}`;
    case 'symlink':
      return sha256(`link:${entry.target}`);
    case 'other':
      return sha256('other');
    case 'beyond-link':
      return sha256('beyond-link');
    case 'missing':
      return undefined;
  }
}

/**
 * Files read at once by one fingerprint (each read is a few calls on libuv's thread pool, four
 * threads by default: side by side, their waits overlap; bounded, so that a repository with
 * thousands of runner files does not hold thousands of descriptors open).
 */
const READS_AT_ONCE = 8;

/** Largest entry points file read to tell whether it declares pytest plugins (larger: it does). */
const ENTRY_POINTS_BYTES = 1024 * 1024;

/** `read` of every item, at most `READS_AT_ONCE` at a time, results in the items' order. */
async function readAll<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const queue = new PQueue({ concurrency: READS_AT_ONCE });
  return Promise.all(items.map((item) => queue.add(() => read(item)) as Promise<R>));
}

/** Fingerprints of `paths` (repository-relative) below the host folder `repo`: path -> value. */
export async function hostFingerprints(repo: string, paths: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(paths)];
  const entries = await readAll(unique, async (path): Promise<FingerprintEntry | undefined> => {
    try {
      return await fingerprintBeneath(repo, path);
    } catch (error) {
      // A path with `..` is never the repository's (git lists none).
      if (error instanceof UnsafePathError) return undefined;
      throw error;
    }
  });
  // An entry points file's value says whether it declares pytest plugins (run-check.ts): read
  // with no-follow opens; one that cannot be read whole counts as declaring them.
  const withPlugins = new Set<string>();
  const entryPoints = unique.filter((path, i) => isEntryPoints(path) && entries[i]?.kind === 'file');
  await readAll(entryPoints, async (path) => {
    const read = await readFileBeneath(repo, path, { maxBytes: ENTRY_POINTS_BYTES }).catch(() => undefined);
    if (read?.kind !== 'file' || read.truncated || declaresPytestPlugin(read.data.toString('utf8')))
      withPlugins.add(path);
  });
  const map = new Map<string, string>();
  unique.forEach((path, i) => {
    const entry = entries[i];
    const value = entry ? fingerprintValue(entry) : undefined;
    if (value !== undefined) map.set(path, withPlugins.has(path) ? `${value} ${PLUGIN_MARK}` : value);
  });
  return map;
}

/** git's NUL-separated list as printed; `undefined` when a name did not survive as UTF-8 text. */
export function parseListing(text: string): string[] | undefined {
  if (text.includes('\uFFFD')) return undefined;
  return text.split('\0').filter((p) => p !== '' && p !== '\n');
}

/** What git's list of runner files depends on, as seen at one moment. */
export interface ListingState {
  /** Paths with a runner file's name (ignored ones too), folders and links not entered. */
  runnerNames: Set<string>;
  /** `.gitignore` files and git's own state: path -> inode, status change time and size. */
  ignoreState: Map<string, string>;
  /** False when the state cannot stand for git's list (see the module comment). */
  complete: boolean;
  /**
   * Whether the walk saw every entry (no cap, no name that is not UTF-8, no folder too deep):
   * then `runnerNames` holds every runner file on disk, ignored by git or not.
   */
  walked: boolean;
}

/** The repository's `ListingState` now. */
export async function listingState(repo: string): Promise<ListingState> {
  const found = await findBeneath(repo, {
    match: (path) => isRunnerFile(path) || isIgnoreFile(path),
    skip: (name) => name === '.git' || name === 'node_modules',
    maxEntries: MAX_WALK_ENTRIES,
  });
  let complete = found.complete;
  const runnerNames = new Set(found.paths.filter((p) => isRunnerFile(p)));
  const ignoreState = new Map<string, string>();
  try {
    if (!(await lstat(join(repo, '.git'))).isDirectory()) complete = false;
  } catch {
    complete = false;
  }
  const statePaths = [...GIT_STATE, ...found.paths.filter(isIgnoreFile)];
  // Each file's state, and the configuration's text, read side by side.
  const [states, config] = await Promise.all([
    readAll(statePaths, async (path): Promise<{ value: string; whole: boolean }> => {
      if (path === '.git/index') {
        // Tools the tests run rewrite the index with fresh file times (`git describe --dirty`,
        // `git status`): what git lists depends on the names and flags of its entries only.
        const index = await readFileBeneath(repo, path, { maxBytes: MAX_INDEX_BYTES });
        const names = index.kind === 'file' && !index.truncated ? indexEntries(index.data) : undefined;
        return {
          value: names === undefined ? index.kind : sha256(names),
          whole: index.kind === 'missing' || names !== undefined,
        };
      }
      const entry = await fingerprintBeneath(repo, path, { content: false });
      return {
        value: entry.kind === 'file' ? `${entry.ino}_${entry.ctimeNs}_${entry.size}` : entry.kind,
        whole: entry.kind !== 'symlink' && entry.kind !== 'beyond-link',
      };
    }),
    readFileBeneath(repo, '.git/config', { maxBytes: 1024 * 1024 }),
  ]);
  statePaths.forEach((path, i) => {
    const state = states[i] as { value: string; whole: boolean };
    if (!state.whole) complete = false;
    ignoreState.set(path, state.value);
  });
  if (complete) {
    // A configuration that reads other files (include, includeIf) or names its own excludes
    // file depends on files this state does not follow.
    if (
      config.kind === 'file' &&
      (config.truncated || /include|excludesfile|objectformat|splitindex/i.test(config.data.toString('utf8')))
    )
      complete = false;
  }
  return { runnerNames, ignoreState, complete, walked: found.complete };
}

/** Largest git index berth reads (a bigger one: git lists again after the tests). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/**
 * The names, stages, modes and flags of a git index's entries (versions 2 to 4, SHA-1 object
 * names) as one text, without the file times git refreshes; undefined for anything else
 * (another version or hash, a split or sparse index, an untracked cache, a malformed file).
 * Format: git's Documentation/gitformat-index.txt.
 */
export function indexEntries(data: Buffer): string | undefined {
  if (data.length < 12 + 20 || data.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = data.readUInt32BE(4);
  const count = data.readUInt32BE(8);
  if (version < 2 || version > 4) return undefined;
  const end = data.length - 20;
  const parts: string[] = [];
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    // ctime, mtime, dev, ino, mode, uid, gid, size (40 bytes), the object name (20), flags (2).
    if (at + 62 > end) return undefined;
    const mode = data.readUInt32BE(at + 24);
    const flags = data.readUInt16BE(at + 60);
    at += 62;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3 || at + 2 > end) return undefined;
      extended = data.readUInt16BE(at);
      at += 2;
    }
    let name: Buffer;
    if (version === 4) {
      // How many bytes of the previous name to drop (git's offset varint), then the rest.
      let drop = 0;
      let byte: number;
      do {
        if (at >= end || drop >= 1 << 24) return undefined;
        byte = data[at++] as number;
        drop = (drop << 7) | (byte & 0x7f);
        if (byte & 0x80) drop += 1;
      } while (byte & 0x80);
      const nul = data.indexOf(0, at);
      if (nul === -1 || nul >= end || drop > previous.length) return undefined;
      name = Buffer.concat([previous.subarray(0, previous.length - drop), data.subarray(at, nul)]);
      at = nul + 1;
    } else {
      const nul = data.indexOf(0, at);
      if (nul === -1 || nul >= end) return undefined;
      name = data.subarray(at, nul);
      // Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
      at = start + Math.ceil((nul + 1 - start) / 8) * 8;
    }
    previous = name;
    parts.push(`${name.toString('latin1')}\0${mode}:${flags & 0xf000}:${extended}`);
  }
  // Extensions: a split index (`link`), sparse folders (`sdir`) or an untracked cache (`UNTR`)
  // change what git lists without changing the entries.
  while (at + 8 <= end) {
    const signature = data.toString('latin1', at, at + 4);
    if (signature === 'link' || signature === 'sdir' || signature === 'UNTR') return undefined;
    at += 8 + data.readUInt32BE(at + 4);
  }
  return at === end ? parts.join('\n') : undefined;
}

/**
 * Whether git's list of runner files must be the same after as before: both states whole, no
 * new path with a runner file's name, and nothing of what decides ignoring and tracking changed.
 */
export function sameListing(before: ListingState, after: ListingState): boolean {
  if (!before.complete || !after.complete) return false;
  for (const path of after.runnerNames) if (!before.runnerNames.has(path)) return false;
  if (before.ignoreState.size !== after.ignoreState.size) return false;
  for (const [path, value] of after.ignoreState) if (before.ignoreState.get(path) !== value) return false;
  return true;
}
