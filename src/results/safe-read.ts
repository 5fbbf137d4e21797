/**
 * Reading files of a job folder that untrusted code may have shaped (the agent's folder is
 * copied out of its environment as data, a trial's logs hold what the tests printed): no
 * component of the path may be a symbolic link, the file must be a regular file, and at most
 * `maxBytes` are read. The report, the viewer and the comparisons read through here.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';

/** A file's text as far as it was read. */
export interface CappedText {
  text: string;
  /** The file's size in bytes. */
  size: number;
  /** True when only the first `maxBytes` bytes were read. */
  truncated: boolean;
}

/**
 * Whether `relative` is a plain relative path inside its root: not absolute, no `..` component,
 * no NUL byte, no backslash.
 */
export function isInsidePath(relative: string): boolean {
  if (relative === '' || isAbsolute(relative) || relative.includes('\0') || relative.includes('\\'))
    return false;
  const normalised = normalize(relative);
  return normalised !== '..' && !normalised.startsWith(`..${sep}`) && !normalised.split(sep).includes('..');
}

/** Options of the readers. */
export interface ReadOptions {
  /**
   * The caller listed the folders on the way (readdir entries that are folders, not links), so
   * only the file itself is checked (O_NOFOLLOW): one open instead of an lstat per component.
   */
  parentsChecked?: boolean;
}

/**
 * Checks every component below `root` with lstat: undefined when one is missing, is a
 * symbolic link, or (for all but the last) is not a folder.
 */
async function walk(root: string, relative: string, options?: ReadOptions): Promise<string | undefined> {
  if (!isInsidePath(relative)) return undefined;
  if (options?.parentsChecked) return join(root, relative);
  let path = root;
  const parts = normalize(relative)
    .split(sep)
    .filter((part) => part !== '' && part !== '.');
  for (const [index, part] of parts.entries()) {
    path = join(path, part);
    const stat = await lstat(path).catch(() => undefined);
    if (!stat || stat.isSymbolicLink()) return undefined;
    if (index < parts.length - 1 && !stat.isDirectory()) return undefined;
  }
  return path;
}

/**
 * Reads `root/relative` as UTF-8, at most `maxBytes` bytes (cut at a character boundary).
 * @returns undefined when the path leaves `root`, passes through or ends at a symbolic link,
 *   is not a regular file, or cannot be read.
 */
export async function readInside(
  root: string,
  relative: string,
  maxBytes: number,
  options?: ReadOptions,
): Promise<CappedText | undefined> {
  const read = await readHeadTail(root, relative, maxBytes, 0, options);
  return read && { text: read.head, size: read.size, truncated: read.omitted > 0 };
}

/**
 * Reads the first `head` and the last `tail` bytes of a file with the checks of `readInside`;
 * the whole file when it is at most `head + tail` bytes. `omitted` counts the bytes between.
 */
export async function readHeadTail(
  root: string,
  relative: string,
  head: number,
  tail: number,
  options?: ReadOptions,
): Promise<{ head: string; tail: string; size: number; omitted: number } | undefined> {
  const path = await walk(root, relative, options);
  if (path === undefined) return undefined;
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!handle) return undefined;
  const readAt = async (position: number, length: number) => {
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, read, length - read, position + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  };
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return undefined;
    if (stat.size <= head + tail) {
      const all = await readAt(0, stat.size);
      return { head: all.toString('utf8'), tail: '', size: stat.size, omitted: 0 };
    }
    const first = await readAt(0, head);
    const last = await readAt(stat.size - tail, tail);
    // Drop characters cut at either edge.
    const headText = new TextDecoder('utf-8').decode(first, { stream: true });
    let start = 0;
    while (start < last.length && start < 4 && ((last[start] as number) & 0xc0) === 0x80) start++;
    return {
      head: headText,
      tail: last.subarray(start).toString('utf8'),
      size: stat.size,
      omitted: stat.size - head - tail,
    };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Reads and parses a JSON file with `readInside`; undefined when it is unreadable, larger than
 * `maxBytes` or not JSON.
 */
export async function readJsonInside(
  root: string,
  relative: string,
  maxBytes: number,
  options?: ReadOptions,
): Promise<unknown> {
  const file = await readInside(root, relative, maxBytes, options);
  if (!file || file.truncated) return undefined;
  try {
    return JSON.parse(file.text);
  } catch {
    return undefined;
  }
}

/** `lstat` through `walk`: the entry's size and kind, or undefined as for `readInside`. */
export async function statInside(
  root: string,
  relative: string,
): Promise<{ size: number; isFile: boolean; isDirectory: boolean } | undefined> {
  const path = await walk(root, relative);
  if (path === undefined) return undefined;
  const stat = await lstat(path).catch(() => undefined);
  return stat && { size: stat.size, isFile: stat.isFile(), isDirectory: stat.isDirectory() };
}

/**
 * The last `bytes` bytes of `root/relative` (the whole file when smaller), synchronously, with the
 * checks of `readInside`; for the console, which words a trial's line as it ends.
 */
export function readTailSync(root: string, relative: string, bytes: number): string | undefined {
  if (!isInsidePath(relative)) return undefined;
  let path = root;
  const parts = normalize(relative)
    .split(sep)
    .filter((part) => part !== '' && part !== '.');
  for (const part of parts) {
    path = join(path, part);
    try {
      if (lstatSync(path).isSymbolicLink()) return undefined;
    } catch {
      return undefined;
    }
  }
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const length = Math.min(bytes, stat.size);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, stat.size - length);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
