/**
 * File access that no link steers: the one way berth reads, writes or copies files
 * in a folder that untrusted code (an agent, a task's tests, the code under test) could
 * have written.
 *
 * Every path below a trusted root is walked one component at a time, each folder
 * opened with `O_DIRECTORY | O_NOFOLLOW` and the next name looked up *in that open
 * folder* (`/proc/self/fd/<fd>/<name>`, Linux's openat without a native binding), so
 * a symbolic link anywhere below the root, or a folder swapped for one while berth
 * walks, is refused instead of followed. A file is first opened with `O_PATH |
 * O_NOFOLLOW` (which opens nothing: no fifo blocks, no device is touched), checked
 * with `fstat`, and only a regular file is reopened for reading through that same
 * descriptor, so what is read is what was checked.
 *
 * - `readFileBeneath`: a regular file's bytes (capped), or what else is there.
 * - `writeFileBeneath`: a file written atomically (temporary name with `O_EXCL`, then
 *   renamed over the name, which replaces a planted link instead of following it).
 * - `copyOutBeneath` and `extractTarBeneath`: a folder copied out of an untrusted place
 *   (a host folder, or a tar stream from a container) as data: regular files and
 *   folders only, size- and count-capped; links, devices, fifos and sockets are recorded
 *   in the returned `CopyReport`, never followed or created. A name that already
 *   exists at the destination is kept (berth's own records win) and recorded.
 * - `copyInBeneath`: a trusted host file or folder copied into an untrusted place (the
 *   local environment's folder) without following what is planted there.
 * - `fingerprintBeneath` and `findBeneath`: a file's content hash and status, and the names
 *   below a folder that match, read without following a link (the tamper checks' fingerprint
 *   of test and runner files in a local environment, src/verifiers/tampering/host-fingerprint.ts).
 *
 * The root passed to each function is trusted (berth made it or the user named it); only
 * what lies below it is treated as hostile. Linux only (berth's sandboxes are).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  type Stats,
} from 'node:fs';
import {
  type FileHandle,
  lchown,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
} from 'node:fs/promises';
import { dirname, join, basename as pathBasename } from 'node:path';
import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { extract as tarExtract } from 'tar-stream';

/** `O_PATH` (Linux, every architecture berth runs on): a descriptor that opens nothing. */
const O_PATH = 0o10000000;
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** What a directory entry is. `hardlink`: a regular file with more than one name. */
export type EntryKind =
  | 'file'
  | 'directory'
  | 'symlink'
  | 'hardlink'
  | 'fifo'
  | 'socket'
  | 'char-device'
  | 'block-device'
  | 'unknown';

/** An entry a copy left out, and why. */
export interface SkippedEntry {
  /** Path relative to the copied folder, `/`-separated (`.` for the folder itself). */
  path: string;
  kind: EntryKind;
  /**
   * `not-regular`: a link or a special file (recorded, never followed or created);
   * `hardlink`: a file with several names that its folder's owner does not own;
   * `exists`: the destination already has that name (berth's record is kept);
   * `truncated`: copied up to the size cap; `over-limit`: left out by the size cap;
   * `too-many`: left out by the entry cap (`maxEntries`); `too-deep`: below `maxDepth`
   * (listed once per left-out folder); `timed-out`: the copy passed `timeoutSec` and stopped
   * there (path `.`); `bad-name`: an archive name with `..` or an unusable component;
   * `error`: unreadable.
   */
  reason:
    | 'not-regular'
    | 'hardlink'
    | 'exists'
    | 'truncated'
    | 'over-limit'
    | 'too-many'
    | 'too-deep'
    | 'timed-out'
    | 'bad-name'
    | 'error';
  /** A symbolic link's target, as text (never followed). */
  target?: string;
  /** Size in bytes of a file cut or left out by the cap. */
  size?: number;
}

/** What a copy did. */
export interface CopyReport {
  files: number;
  directories: number;
  /** Bytes of file content written. */
  bytes: number;
  /** Entries left out (at most `MAX_SKIPPED_LISTED`; `skippedCount` counts them all). */
  skipped: SkippedEntry[];
  skippedCount: number;
  /** The copy passed its `timeoutSec` and stopped (what was copied by then is kept). */
  timedOut?: boolean;
}

/** Caps of one copy. */
export interface CopyLimits {
  /** Total bytes of file content copied; past it files are cut or left out. Default 256 MiB. */
  maxBytes?: number;
  /** Files and folders copied; past it entries are left out. Default 10 000. */
  maxEntries?: number;
  /**
   * Folder levels below the copied folder (`a/b/c` is at depth 3); deeper entries are left
   * out. Default 64.
   */
  maxDepth?: number;
  /**
   * Seconds the whole copy may take; past it the copy stops (the engine's stream is closed)
   * and what was copied is kept. Default 60.
   */
  timeoutSec?: number;
}

export const DEFAULT_COPY_LIMITS: Required<CopyLimits> = {
  maxBytes: 256 * 1024 * 1024,
  maxEntries: 10_000,
  maxDepth: 64,
  timeoutSec: 60,
};

/** How many skipped entries a report lists (the rest are counted). */
export const MAX_SKIPPED_LISTED = 200;

/** A path below the root that is a link or not a folder where one was needed. */
export class UnsafePathError extends Error {
  override name = 'UnsafePathError';
  readonly code = 'BERTH_UNSAFE_PATH';
}

/** Splits a relative path into its names; refuses `..`, absolute paths and empty names. */
export function pathNames(relative: string): string[] {
  const names = relative.split('/').filter((n) => n !== '' && n !== '.');
  for (const n of names) if (n === '..') throw new UnsafePathError(`${relative}: \`..\` is not allowed`);
  return names;
}

function kindOf(s: Stats): EntryKind {
  if (s.isFile()) return s.nlink > 1 ? 'hardlink' : 'file';
  if (s.isDirectory()) return 'directory';
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isFIFO()) return 'fifo';
  if (s.isSocket()) return 'socket';
  if (s.isCharacterDevice()) return 'char-device';
  if (s.isBlockDevice()) return 'block-device';
  return 'unknown';
}

const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException)?.code;

/** An open folder; names are looked up in it, never through a path. */
class Dir {
  private constructor(
    private readonly handle: FileHandle,
    /** For messages only. */
    readonly label: string,
  ) {}

  /** Path that resolves to `name` inside this very folder (the last component is not followed by no-follow opens). */
  at(name: string): string {
    return `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  /** Opens a trusted root folder (following links in its own path: the caller named it). */
  static async root(path: string, create = false): Promise<Dir> {
    if (create) await mkdir(path, { recursive: true });
    return new Dir(await open(path, O_RDONLY | O_DIRECTORY), path);
  }

  /** Opens the child folder `name` without following a link; creates it when asked. */
  async dir(name: string, create = false): Promise<Dir> {
    if (create) {
      try {
        await mkdir(this.at(name), { mode: 0o755 });
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw error;
      }
    }
    try {
      return new Dir(await open(this.at(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW), `${this.label}/${name}`);
    } catch (error) {
      const code = errno(error);
      if (code === 'ELOOP' || code === 'ENOTDIR')
        throw new UnsafePathError(`${this.label}/${name} is not a folder (a link or a file was found there)`);
      throw error;
    }
  }

  /** What `name` is, without opening it (no fifo blocks, no device opens); undefined when absent. */
  async entry(name: string): Promise<{ handle: FileHandle; stats: Stats } | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.at(name), O_PATH | O_NOFOLLOW);
    } catch (error) {
      if (errno(error) === 'ENOENT') return undefined;
      throw error;
    }
    try {
      return { handle, stats: await handle.stat() };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async names(): Promise<string[]> {
    return (await readdir(`/proc/self/fd/${this.handle.fd}`)).sort();
  }

  async owner(): Promise<number> {
    return (await this.handle.stat()).uid;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => {});
  }
}

/** Opens the folder `names` below `root` without following links (creating them when asked). */
async function walk(root: string, names: readonly string[], create: boolean): Promise<Dir> {
  let dir = await Dir.root(root, create);
  for (const name of names) {
    try {
      const next = await dir.dir(name, create);
      await dir.close();
      dir = next;
    } catch (error) {
      await dir.close();
      throw error;
    }
  }
  return dir;
}

/** Reads an already checked regular file through its `O_PATH` descriptor, at most `max` bytes. */
async function readChecked(pathHandle: FileHandle, size: number, max: number): Promise<Buffer> {
  const file = await open(`/proc/self/fd/${pathHandle.fd}`, O_RDONLY | O_NONBLOCK);
  try {
    const want = Math.min(size, max);
    const buffer = Buffer.alloc(want);
    let read = 0;
    while (read < want) {
      const { bytesRead } = await file.read(buffer, read, want - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  } finally {
    await file.close();
  }
}

/** What `readFileBeneath` found. */
export type ReadResult =
  /** A regular file with one name: its content (at most `maxBytes`) and its permission bits. */
  | { kind: 'file'; data: Buffer; truncated: boolean; mode: number }
  | { kind: 'missing' }
  | { kind: Exclude<EntryKind, 'file'>; target?: string };

/**
 * Reads `root/relative` when it is a regular file with one name, at most `maxBytes`
 * (default 64 MiB). A link (at the end or anywhere on the way), a folder, a fifo or a
 * device is reported, never followed or opened.
 */
export async function readFileBeneath(
  root: string,
  relative: string,
  options: { maxBytes?: number } = {},
): Promise<ReadResult> {
  const names = pathNames(relative);
  const last = names.pop();
  if (last === undefined) return { kind: 'directory' };
  let dir: Dir;
  try {
    dir = await walk(root, names, false);
  } catch (error) {
    if (errno(error) === 'ENOENT') return { kind: 'missing' };
    if (error instanceof UnsafePathError) return { kind: 'symlink' };
    throw error;
  }
  try {
    const found = await dir.entry(last);
    if (!found) return { kind: 'missing' };
    try {
      const kind = kindOf(found.stats);
      if (kind === 'file') {
        const max = options.maxBytes ?? 64 * 1024 * 1024;
        const data = await readChecked(found.handle, found.stats.size, max);
        return { kind, data, truncated: found.stats.size > max, mode: found.stats.mode & 0o7777 };
      }
      if (kind === 'symlink') return { kind, target: await readlink(dir.at(last)).catch(() => '') };
      return { kind };
    } finally {
      await found.handle.close();
    }
  } finally {
    await dir.close();
  }
}

/** Writes `data` to a new file `name` in `dir` under a temporary name, then renames it over `name`. */
async function writeAtomicIn(dir: Dir, name: string, data: string | Uint8Array, mode: number): Promise<void> {
  const temporary = `.${name.slice(0, 100)}.berth-${randomBytes(6).toString('hex')}.tmp`;
  const file = await open(dir.at(temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    await file.writeFile(data);
  } catch (error) {
    await file.close();
    await rm(dir.at(temporary), { force: true }).catch(() => {});
    throw error;
  }
  await file.close();
  try {
    // rename(2) replaces a link at `name` itself; it never writes through it.
    await rename(dir.at(temporary), dir.at(name));
  } catch (error) {
    await rm(dir.at(temporary), { force: true }).catch(() => {});
    throw error;
  }
}

/**
 * Writes `root/relative` atomically without following any link below `root`: missing
 * folders are created, a folder on the way that is a link throws `UnsafePathError`, a
 * link at the file's own name is replaced (not written through).
 * @throws UnsafePathError, or the file system's error (EISDIR when a folder has the name)
 */
export async function writeFileBeneath(
  root: string,
  relative: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const names = pathNames(relative);
  const last = names.pop();
  if (last === undefined) throw new UnsafePathError(`${root}: no file name to write`);
  const dir = await walk(root, names, true);
  try {
    await writeAtomicIn(dir, last, data, options.mode ?? 0o644);
  } finally {
    await dir.close();
  }
}

/** Collects a copy's report and enforces its caps. */
class Tally {
  readonly report: CopyReport = { files: 0, directories: 0, bytes: 0, skipped: [], skippedCount: 0 };
  readonly limits: Required<CopyLimits>;
  /** When the copy must stop (epoch ms). */
  readonly deadline: number;
  private listedTooMany = false;

  constructor(limits: CopyLimits = {}) {
    this.limits = { ...DEFAULT_COPY_LIMITS, ...stripUndefined(limits) };
    this.deadline = Date.now() + Math.max(0, this.limits.timeoutSec) * 1000;
  }

  /**
   * Records a left-out entry. Past the entry cap only the first is listed; below the depth
   * cap only the top of each left-out folder (the rest are counted).
   */
  skip(entry: SkippedEntry, listed = true): void {
    this.report.skippedCount++;
    if (entry.reason === 'too-many') {
      if (this.listedTooMany) return;
      this.listedTooMany = true;
    }
    if (entry.path.length > 300) entry.path = `${entry.path.slice(0, 300)}...`;
    if (listed && this.report.skipped.length < MAX_SKIPPED_LISTED) this.report.skipped.push(entry);
  }

  /** Whether one more entry fits the count cap. */
  entryFits(): boolean {
    return this.report.files + this.report.directories < this.limits.maxEntries;
  }

  /** Whether an entry `depth` levels below the copied folder is too deep (0: the folder itself). */
  tooDeep(depth: number): boolean {
    return depth > this.limits.maxDepth;
  }

  /** Whether the copy's time is up; records it once. */
  timeUp(): boolean {
    if (this.report.timedOut) return true;
    if (Date.now() < this.deadline) return false;
    this.markTimedOut();
    return true;
  }

  markTimedOut(): void {
    if (this.report.timedOut) return;
    this.report.timedOut = true;
    this.skip({ path: '.', kind: 'directory', reason: 'timed-out' });
  }

  /** Bytes still allowed. */
  room(): number {
    return Math.max(0, this.limits.maxBytes - this.report.bytes);
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Creates file `name` in `dir` only if the name is free (O_EXCL, no follow); false when taken. */
async function createExclusive(
  dir: Dir,
  name: string,
  data: Uint8Array | AsyncIterable<Uint8Array>,
  mode: number,
): Promise<boolean> {
  let file: FileHandle;
  try {
    file = await open(dir.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (error) {
    if (errno(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    if (data instanceof Uint8Array) await file.writeFile(data);
    else for await (const chunk of data) await file.write(chunk);
  } finally {
    await file.close();
  }
  return true;
}

const fileMode = (mode: number) => ((mode & 0o111) !== 0 ? 0o755 : 0o644);

/**
 * Copies the folder (or file) `sourceRoot/sourceRelative`, which untrusted code may have
 * written, to `destination` (a trusted host path, created) as data. Regular files and
 * folders only; links, special files and hard-linked files not owned by the source
 * folder's owner are recorded, never followed. Names already at the destination are
 * kept. Never throws for what it finds below the source.
 * @throws an ENOENT error when the source does not exist
 */
export async function copyOutBeneath(
  sourceRoot: string,
  sourceRelative: string,
  destination: string,
  limits: CopyLimits = {},
): Promise<CopyReport> {
  const tally = new Tally(limits);
  const names = pathNames(sourceRelative);
  const last = names.pop();
  let parent: Dir;
  try {
    parent = await walk(sourceRoot, names, false);
  } catch (error) {
    if (error instanceof UnsafePathError) {
      tally.skip({ path: '.', kind: 'symlink', reason: 'not-regular' });
      return tally.report;
    }
    throw error;
  }
  try {
    if (last === undefined) {
      const destDir = await Dir.root(destination, true);
      try {
        await copyDirContents(parent, destDir, '', tally, await parent.owner());
      } finally {
        await destDir.close();
      }
      return tally.report;
    }
    await mkdir(dirname(destination), { recursive: true });
    const destParent = await Dir.root(dirname(destination));
    try {
      // Hard links are copied only when the copied folder's owner owns the file (its own data).
      const top = await parent.entry(last);
      if (!top)
        throw Object.assign(new Error(`${sourceRoot}/${sourceRelative}: no such file or folder`), {
          code: 'ENOENT',
        });
      const owner = top?.stats.isDirectory() ? top.stats.uid : await parent.owner();
      await top?.handle.close();
      await copyEntry(parent, last, destParent, pathBasename(destination), '.', tally, owner);
    } finally {
      await destParent.close();
    }
  } finally {
    await parent.close();
  }
  return tally.report;
}

async function copyDirContents(
  from: Dir,
  to: Dir,
  prefix: string,
  tally: Tally,
  owner: number,
): Promise<void> {
  for (const name of await from.names()) {
    if (tally.timeUp()) return;
    await copyEntry(from, name, to, name, prefix ? `${prefix}/${name}` : name, tally, owner);
  }
}

async function copyEntry(
  from: Dir,
  name: string,
  to: Dir,
  toName: string,
  path: string,
  tally: Tally,
  owner: number,
): Promise<void> {
  let found: { handle: FileHandle; stats: Stats } | undefined;
  try {
    found = await from.entry(name);
  } catch {
    tally.skip({ path, kind: 'unknown', reason: 'error' });
    return;
  }
  if (!found) return;
  try {
    const { stats, handle } = found;
    let kind = kindOf(stats);
    // A second name of a file the folder's owner owns is that owner's data; anything else is refused.
    if (kind === 'hardlink' && stats.uid === owner) kind = 'file';
    const depth = path === '.' ? 0 : path.split('/').length;
    if ((kind === 'directory' || kind === 'file') && tally.tooDeep(depth))
      return tally.skip({ path, kind, reason: 'too-deep' });
    if (kind === 'directory') {
      if (!tally.entryFits()) return tally.skip({ path, kind, reason: 'too-many' });
      let source: Dir;
      try {
        source = await from.dir(name);
      } catch {
        // Swapped for a link (or removed) since it was looked at.
        return tally.skip({ path, kind: 'symlink', reason: 'not-regular' });
      }
      try {
        const target = await to.dir(toName, true);
        tally.report.directories++;
        try {
          await copyDirContents(source, target, path === '.' ? '' : path, tally, owner);
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
      return;
    }
    if (kind === 'file') {
      if (!tally.entryFits()) return tally.skip({ path, kind, reason: 'too-many', size: stats.size });
      const room = tally.room();
      if (room === 0 && stats.size > 0)
        return tally.skip({ path, kind, reason: 'over-limit', size: stats.size });
      const data = await readChecked(handle, stats.size, room);
      if (!(await createExclusive(to, toName, data, fileMode(stats.mode))))
        return tally.skip({ path, kind, reason: 'exists' });
      tally.report.files++;
      tally.report.bytes += data.length;
      if (data.length < stats.size) tally.skip({ path, kind, reason: 'truncated', size: stats.size });
      return;
    }
    const target = kind === 'symlink' ? await readlink(from.at(name)).catch(() => undefined) : undefined;
    tally.skip({
      path,
      kind,
      reason: kind === 'hardlink' ? 'hardlink' : 'not-regular',
      ...(target !== undefined ? { target: target.slice(0, 300) } : {}),
    });
  } catch (error) {
    if (error instanceof UnsafePathError) throw error;
    tally.skip({ path, kind: 'unknown', reason: 'error' });
  } finally {
    await found.handle.close();
  }
}

/**
 * Extracts a tar stream (a container's `GET /archive`) into `destination` as data: the
 * archive's first name component is the copied folder (or file) itself and maps to
 * `destination`; regular files and folders are created, links, devices and fifos
 * recorded, `..` names refused, sizes capped. A hard link inside the archive becomes a
 * copy of the file it names when that file was extracted. Names already at the
 * destination are kept.
 * @throws the stream's error (a broken archive); never for what the archive holds
 */
export async function extractTarBeneath(
  archive: Readable,
  destination: string,
  limits: CopyLimits = {},
): Promise<CopyReport> {
  const tally = new Tally(limits);
  await mkdir(dirname(destination), { recursive: true });
  const root = dirname(destination);
  const top = pathBasename(destination);
  /** Extracted files by archive path, for hard links inside the archive. */
  const extracted = new Map<string, string>();
  const parser = tarExtract();
  const folders = new FolderCache(root);
  archive.on('error', (error) => parser.destroy(error));
  // Past the time limit the stream is closed (for a container: the engine's request is aborted)
  // and the parser destroyed WITH an error. tar-stream's iterator waits for good when the
  // parser is destroyed without one (an entry stream destroyed without an error does that to
  // its parser): trust16 saw a 1 TiB sparse `stdout.txt` still copying after 300 s, and CI
  // hung at f9e1ba0. So the parser is stopped here first, and each wait for the next entry
  // also ends when the parser closes.
  const stop = () => {
    tally.markTimedOut();
    archive.destroy();
    parser.destroy(new Error(`the copy passed its time limit of ${tally.limits.timeoutSec} s`));
  };
  const timeUp = () => {
    if (!tally.timeUp()) return false;
    stop();
    return true;
  };
  const timer = setTimeout(stop, Math.max(0, tally.deadline - Date.now()));
  const entries = parser[Symbol.asyncIterator]() as AsyncIterator<TarEntry>;
  let failure: unknown;
  parser.on('error', (error) => {
    failure = error;
  });
  const closed = new Promise<IteratorResult<TarEntry>>((resolve, reject) =>
    parser.once('close', () => (failure ? reject(failure) : resolve({ value: undefined, done: true }))),
  );
  closed.catch(() => undefined);
  archive.pipe(parser);
  try {
    for (;;) {
      const next = await Promise.race([entries.next(), closed]);
      if (next.done) break;
      if (timeUp()) break;
      const entry = next.value;
      const header = entry.header;
      let names: string[];
      try {
        names = pathNames(header.name);
      } catch {
        tally.skip({ path: header.name, kind: 'unknown', reason: 'bad-name' });
        entry.resume();
        continue;
      }
      const inner = names.slice(1);
      const path = inner.length === 0 ? '.' : inner.join('/');
      if (tally.tooDeep(inner.length)) {
        // Listed once, at the first level below the cap; what is below it is only counted.
        const kind: EntryKind = header.type === 'directory' ? 'directory' : 'file';
        tally.skip({ path, kind, reason: 'too-deep' }, inner.length === tally.limits.maxDepth + 1);
        entry.resume();
        continue;
      }
      const target = [top, ...inner];
      try {
        await extractEntry(entry, header, folders, target, path, names.join('/'), tally, extracted, timeUp);
      } catch (error) {
        tally.skip({
          path,
          kind: 'unknown',
          reason: error instanceof UnsafePathError ? 'not-regular' : 'error',
        });
      }
      entry.resume();
    }
  } catch (error) {
    if (!tally.report.timedOut) throw error;
  } finally {
    clearTimeout(timer);
    archive.destroy();
    parser.destroy();
    await folders.close();
  }
  return tally.report;
}

/**
 * The last destination folder opened while extracting, kept open: a tar stream lists a
 * folder's files one after another, so each is created without walking from the root again.
 */
class FolderCache {
  private key: string | undefined;
  private dir: Dir | undefined;

  constructor(readonly root: string) {}

  async open(names: readonly string[]): Promise<Dir> {
    const key = names.join('/');
    if (this.dir && this.key === key) return this.dir;
    await this.close();
    this.dir = await walk(this.root, names, true);
    this.key = key;
    return this.dir;
  }

  async close(): Promise<void> {
    const dir = this.dir;
    this.dir = undefined;
    this.key = undefined;
    await dir?.close();
  }
}

type TarEntry = Readable & { header: import('tar-stream').Headers };

async function extractEntry(
  entry: TarEntry,
  header: import('tar-stream').Headers,
  folders: FolderCache,
  target: string[],
  path: string,
  archiveName: string,
  tally: Tally,
  extracted: Map<string, string>,
  timeUp: () => boolean,
): Promise<void> {
  const type = header.type ?? 'file';
  const parentNames = target.slice(0, -1);
  const name = target[target.length - 1] as string;
  if (type === 'directory') {
    if (!tally.entryFits()) return tally.skip({ path, kind: 'directory', reason: 'too-many' });
    await folders.open(target);
    tally.report.directories++;
    return;
  }
  if (type === 'file' || type === 'contiguous-file' || type === 'link') {
    let data: Uint8Array | AsyncIterable<Uint8Array>;
    let size = header.size ?? 0;
    let from: string | undefined;
    if (type === 'link') {
      from = extracted.get(pathNames(header.linkname ?? '').join('/'));
      if (from === undefined)
        return tally.skip({
          path,
          kind: 'hardlink',
          reason: 'hardlink',
          target: (header.linkname ?? '').slice(0, 300),
        });
      const fromNames = pathNames(from);
      const original = await readFileBeneath(folders.root, fromNames.join('/'));
      if (original.kind !== 'file') return tally.skip({ path, kind: 'hardlink', reason: 'hardlink' });
      size = original.data.length;
      data = original.data;
    } else data = entry;
    if (!tally.entryFits()) return tally.skip({ path, kind: 'file', reason: 'too-many', size });
    const room = tally.room();
    if (room === 0 && size > 0) return tally.skip({ path, kind: 'file', reason: 'over-limit', size });
    const capped = data instanceof Uint8Array ? data.subarray(0, room) : limitStream(data, room, timeUp);
    const dir = await folders.open(parentNames);
    if (!(await createExclusive(dir, name, capped, fileMode(header.mode ?? 0o644))))
      return tally.skip({ path, kind: 'file', reason: 'exists' });
    const written = Math.min(size, room);
    tally.report.files++;
    tally.report.bytes += written;
    if (written < size) tally.skip({ path, kind: 'file', reason: 'truncated', size });
    extracted.set(archiveName, target.join('/'));
    return;
  }
  const kinds: Record<string, EntryKind> = {
    symlink: 'symlink',
    fifo: 'fifo',
    'character-device': 'char-device',
    'block-device': 'block-device',
  };
  tally.skip({
    path,
    kind: kinds[type] ?? 'unknown',
    reason: 'not-regular',
    ...(type === 'symlink' ? { target: (header.linkname ?? '').slice(0, 300) } : {}),
  });
}

/**
 * The first `max` bytes of a stream; the rest is read and dropped until the stream ends or
 * `timeUp()` says the copy's time is over (what was kept is then the file). Each dropped chunk
 * waits a turn of the event loop: a source whose data is always ready (an archive's zeros read
 * as fast as they come) would otherwise be drained by promise jobs alone, and the copy's time
 * limit, a timer, would never fire (the whole test run hung on it in CI at f9e1ba0).
 */
async function* limitStream(
  source: AsyncIterable<Uint8Array>,
  max: number,
  timeUp: () => boolean,
): AsyncIterable<Uint8Array> {
  let left = max;
  for await (const chunk of source) {
    if (left <= 0) {
      await nextTurn();
      if (timeUp()) return;
      continue;
    }
    const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
    left -= part.length;
    yield part;
  }
}

/** A uid/gid that files copied in are given (the sandbox's), when berth runs as root. */
export type Owner = { uid: number; gid: number } | undefined;

/**
 * Copies a trusted host file or folder (`source`, e.g. a task's `tests/`) to
 * `root/relative`, a place untrusted code may have written: folders on the way are
 * opened without following links (a link or file where a folder must be is removed and
 * the folder made), files are written atomically (a planted link at a name is replaced),
 * links inside `source` are recreated as links. With `owner`, every folder on the way
 * below `root` and everything written is given to it (`lchown`, no link followed).
 */
export async function copyInBeneath(
  source: string,
  root: string,
  relative: string,
  owner?: Owner,
): Promise<void> {
  const names = pathNames(relative);
  const last = names.pop();
  if (last === undefined) throw new UnsafePathError(`${root}: no name to copy to`);
  let dir = await Dir.root(root, true);
  try {
    for (const name of names) {
      const next = await openDirReplacing(dir, name, owner);
      await dir.close();
      dir = next;
    }
    await copyInEntry(source, dir, last, owner);
  } finally {
    await dir.close();
  }
}

async function giveTo(dir: Dir, name: string, owner: Owner): Promise<void> {
  if (owner) await lchown(dir.at(name), owner.uid, owner.gid);
}

async function openDirReplacing(dir: Dir, name: string, owner: Owner): Promise<Dir> {
  const found = await dir.entry(name);
  if (found) {
    const isDir = found.stats.isDirectory();
    await found.handle.close();
    if (!isDir) await rm(dir.at(name), { force: true });
  }
  const opened = await dir.dir(name, true);
  await giveTo(dir, name, owner);
  return opened;
}

async function copyInEntry(source: string, dir: Dir, name: string, owner: Owner): Promise<void> {
  const s = await lstat(source);
  if (s.isDirectory()) {
    const child = await openDirReplacing(dir, name, owner);
    try {
      for (const entry of (await readdir(source)).sort())
        await copyInEntry(join(source, entry), child, entry, owner);
    } finally {
      await child.close();
    }
    return;
  }
  const existing = await dir.entry(name);
  if (existing) {
    const isDir = existing.stats.isDirectory();
    await existing.handle.close();
    if (isDir) await rm(dir.at(name), { recursive: true, force: true });
  }
  if (s.isSymbolicLink()) {
    const temporary = `.${name.slice(0, 100)}.berth-${randomBytes(6).toString('hex')}.tmp`;
    await symlink(await readlink(source), dir.at(temporary));
    await rename(dir.at(temporary), dir.at(name));
  } else if (s.isFile()) {
    await writeAtomicIn(dir, name, await readFile(source), fileMode(s.mode));
  } else return;
  await giveTo(dir, name, owner);
}

/** One line per skipped entry (`path: kind -> target (reason)`), for logs and notes. */
export function describeSkipped(report: CopyReport): string[] {
  const lines = report.skipped.map(
    (s) => `${s.path}: ${s.kind}${s.target !== undefined ? ` -> ${s.target}` : ''} (${s.reason})`,
  );
  if (report.skippedCount > report.skipped.length)
    lines.push(`... and ${report.skippedCount - report.skipped.length} more`);
  return lines;
}

/** What `fingerprintBeneath` saw at one path. */
export type FingerprintEntry =
  /** A regular file (one name or several): its content's SHA-256, inode, status change time and size. */
  | { kind: 'file'; sha256: string; ino: bigint; ctimeNs: bigint; size: bigint }
  /** A link at the path itself: its target as text (never followed). */
  | { kind: 'symlink'; target: string }
  | { kind: 'missing' }
  /** A link or a file where a folder on the way should be. */
  | { kind: 'beyond-link' }
  /** A folder, fifo, socket or device (never opened). */
  | { kind: 'other' };

/**
 * What is at `root/relative`, never following a link on the way or at the end: a regular
 * file's SHA-256 (its whole content, read through the descriptor that was checked; with
 * `content: false` only its inode, status change time and size), a link's target, or what
 * else is there. A fifo or device is never opened.
 * @throws UnsafePathError for a path with `..`; the file system's errors other than a missing name
 */
export async function fingerprintBeneath(
  root: string,
  relative: string,
  options: { content?: boolean } = {},
): Promise<FingerprintEntry> {
  const names = pathNames(relative);
  const last = names.pop();
  if (last === undefined) return { kind: 'other' };
  let dir: Dir;
  try {
    dir = await walk(root, names, false);
  } catch (error) {
    if (errno(error) === 'ENOENT') return { kind: 'missing' };
    if (error instanceof UnsafePathError) return { kind: 'beyond-link' };
    throw error;
  }
  try {
    let handle: FileHandle;
    try {
      handle = await open(dir.at(last), O_PATH | O_NOFOLLOW);
    } catch (error) {
      if (errno(error) === 'ENOENT') return { kind: 'missing' };
      if (errno(error) === 'ENOTDIR') return { kind: 'beyond-link' };
      throw error;
    }
    try {
      const stats = await handle.stat({ bigint: true });
      if (stats.isSymbolicLink())
        return { kind: 'symlink', target: await readlink(dir.at(last)).catch(() => '') };
      if (!stats.isFile()) return { kind: 'other' };
      const status = { ino: stats.ino, ctimeNs: stats.ctimeNs, size: stats.size };
      if (options.content === false) return { kind: 'file', sha256: '', ...status };
      const hash = createHash('sha256');
      const file = await open(`/proc/self/fd/${handle.fd}`, O_RDONLY | O_NONBLOCK);
      try {
        const buffer = Buffer.allocUnsafe(1024 * 1024);
        for (;;) {
          const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
          if (bytesRead === 0) break;
          hash.update(buffer.subarray(0, bytesRead));
        }
      } finally {
        await file.close();
      }
      return { kind: 'file', sha256: hash.digest('hex'), ...status };
    } finally {
      await handle.close();
    }
  } finally {
    await dir.close();
  }
}

/** Folder levels `walkBeneath` enters at most (one open folder each). */
export const MAX_FIND_DEPTH = 128;

/** One entry of a {@link walkBeneath} walk. */
interface WalkEntry {
  /** Below the root, `/`-separated. */
  path: string;
  name: string;
  /** The entry in its open folder (`/proc/self/fd/<fd>/<name>`): opened with no-follow only. */
  at: string;
  /** 0 for the root's own entries. */
  depth: number;
  /** What the folder's listing says (no `stat`): a folder. */
  isDirectory: boolean;
}

/**
 * What {@link walkBeneath}'s visitor does with an entry: `false` stops the walk, a descriptor is a
 * folder it opened without following a link for the walk to enter (the walk closes it), nothing
 * goes on.
 */
type WalkStep = number | false | undefined;

/**
 * The one walk below `rootPath` of a tree untrusted code could have written: depth first, one open
 * folder per level (never one per folder waiting its turn), only into folders `visit` opened
 * without following a link; a name that is not UTF-8 stops it. Its calls are synchronous (through
 * the thread pool each folder cost three round trips, which a loaded machine or a busy event loop
 * stretch: a trial's walk after the tests waited for the parse of the test log), and the event loop
 * is let go each time 256 is counted (one an entry; `visit` counts what it reads with `breathe`).
 * `visit` sees each entry, in the byte order of names with `sorted`, else as listed.
 * @returns false when the walk stopped: `visit` said so, past `maxEntries` entries, a folder below
 *   `MAX_FIND_DEPTH` levels, a name that is not UTF-8
 * @throws the file system's errors (the root is no folder) and `visit`'s
 */
async function walkBeneath(
  rootPath: string,
  options: { maxEntries: number; sorted?: boolean },
  visit: (entry: WalkEntry, breathe: (cost: number) => Promise<void>) => WalkStep | Promise<WalkStep>,
): Promise<boolean> {
  let seen = 0;
  let sinceYield = 0;
  const breathe = async (cost: number) => {
    sinceYield += cost;
    if (sinceYield < 256) return;
    sinceYield = 0;
    await nextTurn();
  };
  const walk = async (fd: number, prefix: string, depth: number): Promise<boolean> => {
    if (depth > MAX_FIND_DEPTH) return false;
    const entries = readdirSync(Buffer.from(`/proc/self/fd/${fd}/`), {
      withFileTypes: true,
      encoding: 'buffer',
    });
    if (options.sorted) entries.sort((a, b) => Buffer.compare(a.name, b.name));
    for (const entry of entries) {
      if (++seen > options.maxEntries) return false;
      // breathe(1), without a promise for each entry.
      if (++sinceYield >= 256) await breathe(0);
      const raw = entry.name;
      const name = raw.toString('utf8');
      if (!Buffer.from(name, 'utf8').equals(raw)) return false;
      const path = `${prefix}${name}`;
      const step = visit(
        { path, name, at: `/proc/self/fd/${fd}/${name}`, depth, isDirectory: entry.isDirectory() },
        breathe,
      );
      const child = step instanceof Promise ? await step : step;
      if (child === false) return false;
      if (child === undefined) continue;
      try {
        if (!(await walk(child, `${path}/`, depth + 1))) return false;
      } finally {
        closeSync(child);
      }
    }
    return true;
  };
  const root = openSync(rootPath, O_RDONLY | O_DIRECTORY);
  try {
    return await walk(root, '', 0);
  } finally {
    closeSync(root);
  }
}

/**
 * The paths below `root` (relative, `/`-separated) of every entry that is not a folder and
 * that `match` accepts, found without following a link ({@link walkBeneath}): folders are opened
 * one by one with no-follow, those `skip` names are not entered. `complete` is false when the walk
 * stopped at `maxEntries` entries, below `MAX_FIND_DEPTH` folder levels or at a name that is not
 * UTF-8 (what was found is then not all there is).
 */
export async function findBeneath(
  rootPath: string,
  options: { match: (path: string) => boolean; skip: (name: string) => boolean; maxEntries: number },
): Promise<{ paths: string[]; complete: boolean }> {
  const paths: string[] = [];
  const complete = await walkBeneath(rootPath, options, ({ path, name, at, isDirectory }) => {
    if (!isDirectory) {
      if (options.match(path)) paths.push(path);
      return undefined;
    }
    if (options.skip(name)) return undefined;
    try {
      return openSync(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (error) {
      // Gone or swapped for something else (a link, a file) since it was listed: nothing to enter.
      const code = errno(error);
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') return undefined;
      throw error;
    }
  });
  return { paths, complete };
}

/** Caps of {@link treeDigestBeneath}: past either it gives up (undefined). */
export interface DigestLimits {
  /** Files, folders, links and the rest counted together. Default 100 000. */
  maxEntries?: number;
  /** Bytes of file content read. Default 1 GiB. */
  maxBytes?: number;
}

/**
 * One SHA-256 over the tree below `root`, read without following a link (each folder opened
 * with `O_DIRECTORY | O_NOFOLLOW` in its open parent, each entry first opened `O_PATH |
 * O_NOFOLLOW` and checked with `fstat`, only a regular file read, through that descriptor; a
 * fifo or device is never opened): for every entry in byte order of its path, its path, kind
 * and permission bits, a file's content hash, a link's target as text. `skipTop` names entries
 * of `root` itself left out (`.git`). Undefined when it gave up: a cap, `MAX_FIND_DEPTH`, a
 * name that is not UTF-8, or an entry that changed while it was read. The calls are
 * synchronous (a thousand small files: a tenth of the time of the same walk through the
 * thread pool), the event loop is let go every 256 entries or 8 MiB read.
 * The digest is berth's own shortcut (the Go compile step's "this content was compiled
 * before"): only what berth reads decides it, never a process of the tree's owner.
 */
export async function treeDigestBeneath(
  rootPath: string,
  options: DigestLimits & { skipTop?: readonly string[] } = {},
): Promise<string | undefined> {
  let bytesLeft = options.maxBytes ?? 1024 * 1024 * 1024;
  const skipTop = new Set(options.skipTop ?? []);
  const digest = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const field = (value: Buffer | string) => {
    const data = typeof value === 'string' ? Buffer.from(value) : value;
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    digest.update(length);
    digest.update(data);
  };
  /** Hashes one entry; a folder's descriptor to enter, false when it gave up. */
  const visit = async (
    { path, name, at, depth }: WalkEntry,
    breathe: (cost: number) => Promise<void>,
  ): Promise<WalkStep> => {
    if (depth === 0 && skipTop.has(name)) return undefined;
    let handle: number;
    try {
      handle = openSync(at, O_PATH | O_NOFOLLOW);
    } catch {
      return false;
    }
    try {
      const stats = fstatSync(handle);
      field(path);
      field(kindOf(stats));
      field((stats.mode & 0o7777).toString(8));
      if (stats.isSymbolicLink()) {
        field(readlinkSync(at, { encoding: 'buffer' }));
      } else if (stats.isFile()) {
        bytesLeft -= stats.size;
        if (bytesLeft < 0) return false;
        const content = createHash('sha256');
        const file = openSync(`/proc/self/fd/${handle}`, O_RDONLY | O_NONBLOCK);
        let size = 0;
        try {
          for (;;) {
            const read = readSync(file, buffer, 0, buffer.length, null);
            if (read === 0) break;
            size += read;
            if (size > stats.size) return false;
            content.update(buffer.subarray(0, read));
            await breathe(read >> 15);
          }
        } finally {
          closeSync(file);
        }
        if (size !== stats.size) return false;
        field(content.digest('hex'));
      } else if (stats.isDirectory()) {
        try {
          return openSync(`/proc/self/fd/${handle}`, O_RDONLY | O_DIRECTORY);
        } catch {
          return false;
        }
      }
      return undefined;
    } finally {
      closeSync(handle);
    }
  };
  try {
    const whole = await walkBeneath(
      rootPath,
      { maxEntries: options.maxEntries ?? 100_000, sorted: true },
      visit,
    );
    return whole ? digest.digest('hex') : undefined;
  } catch {
    return undefined;
  }
}
