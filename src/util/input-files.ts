/**
 * Reading files the user gave: file-system errors become bad-input messages (exit 2)
 * naming the path, never internal errors.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { InputError, type InputIssue } from '../errors.ts';

const FS_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of this path is a file, not a folder',
  EISDIR: 'is a folder, a file was expected',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'name too long',
  EEXIST: 'already exists',
  EROFS: 'read-only file system',
};

/**
 * What a file-system error says about a path (missing, not a folder, a folder where a file
 * was expected, no permission...), as `what (CODE in syscall)`; undefined for any other error.
 */
export function describeFsError(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException | undefined;
  if (typeof e !== 'object' || e === null || typeof e.code !== 'string') return undefined;
  const text = FS_ERRORS[e.code];
  if (text === undefined) return undefined;
  return `${text} (${e.code}${e.syscall ? ` in ${e.syscall}` : ''})`;
}

/**
 * The message for a file-system error on a path (`path: what (CODE)`), or undefined when the
 * error is not one or names no path. The CLI's error handler (src/cli/main.ts) shows these as
 * bad input (exit 2): every path a command opens came from the user (flags, datasets, job
 * folders), so this is the one boundary they all pass.
 */
export function pathErrorMessage(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException | undefined;
  const text = describeFsError(error);
  if (text === undefined || typeof e?.path !== 'string') return undefined;
  const dest = (e as { dest?: unknown }).dest;
  return `${e.path}${typeof dest === 'string' ? ` -> ${dest}` : ''}: ${text}`;
}

/**
 * Reads a text file of the user's input.
 * @throws InputError naming `file` when it cannot be read (missing, a folder, no permission...).
 */
export function readInputText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const text = describeFsError(error);
    if (text === undefined) throw error;
    throw new InputError({ file }, `cannot be read: ${text}`, { cause: error });
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Every symbolic link under `root` whose target is outside `root`: judged both by its text
 * (resolved against the link's folder) and, when it exists, by its real path, so a chain of
 * links cannot escape either. A task folder is copied into the environment and read by
 * berth (instruction.md, tests/): a link out of it would carry host files (`/etc/shadow`,
 * a home folder) into a container or a report.
 * @returns one issue per escaping link (`file` is the link, `field` its target text).
 */
export function escapingSymlinks(root: string): InputIssue[] {
  const top = resolve(root);
  let realTop: string;
  try {
    realTop = realpathSync(top);
  } catch {
    return [];
  }
  const issues: InputIssue[] = [];
  const walk = (dir: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isSymbolicLink() || lstatSync(path).isSymbolicLink()) {
        const target = readlinkSync(path);
        let real: string | undefined;
        try {
          real = realpathSync(path);
        } catch {
          real = undefined; // dangling: judged by its text alone
        }
        const lexical = resolve(dirname(path), target);
        if (!inside(top, lexical) || (real !== undefined && !inside(realTop, real))) {
          issues.push({
            file: path,
            message: `symbolic link to ${JSON.stringify(target)} points outside the task folder ${top}; copy the file into the task folder instead`,
          });
        }
      }
    }
  };
  walk(top);
  return issues;
}

/**
 * Decodes UTF-8 input. Invalid bytes are replaced by U+FFFD, as Python's and Node's lenient
 * decoders do, and the 1-based lines holding them are returned so the caller can warn (text
 * fields) or refuse (ids, where a replaced byte would make an id that matches nothing).
 */
export function decodeUtf8(bytes: Uint8Array): { text: string; invalidLines: number[] } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), invalidLines: [] };
  } catch {
    const strict = new TextDecoder('utf-8', { fatal: true });
    const invalidLines: number[] = [];
    let start = 0;
    let line = 1;
    while (start <= bytes.length) {
      let end = bytes.indexOf(0x0a, start);
      if (end < 0) end = bytes.length;
      try {
        strict.decode(bytes.subarray(start, end));
      } catch {
        invalidLines.push(line);
      }
      start = end + 1;
      line++;
    }
    return { text: new TextDecoder('utf-8').decode(bytes), invalidLines };
  }
}

/** The warning for `decodeUtf8`'s invalid lines: `file: invalid UTF-8 on line(s) 3, 7 ...`. */
export function invalidUtf8Warning(file: string, invalidLines: readonly number[]): string {
  const shown = invalidLines.slice(0, 10).join(', ');
  const more = invalidLines.length > 10 ? ` and ${invalidLines.length - 10} more` : '';
  return `${file}: invalid UTF-8 on line(s) ${shown}${more}; the bad bytes were replaced by U+FFFD`;
}

/**
 * Decodes a user's file like `decodeUtf8` and writes the warning to stderr when some lines
 * hold invalid UTF-8 (the input is still read: only those characters are lost).
 */
export function decodeUtf8Warning(bytes: Uint8Array, file: string): { text: string; invalidLines: number[] } {
  const decoded = decodeUtf8(bytes);
  if (decoded.invalidLines.length > 0)
    process.stderr.write(`berth: warning: ${invalidUtf8Warning(file, decoded.invalidLines)}\n`);
  return decoded;
}
