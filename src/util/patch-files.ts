/**
 * berth's one diff parser: a unified diff (git's extended headers, or plain `---`/`+++` pairs)
 * split into its file sections, each with its paths, whether it creates or deletes the file,
 * its header text and its hunks as text, without applying anything. Every caller uses it:
 * discarding an agent's changes to the files a test patch touches, SWE-bench's test
 * directives, undoing a partly applied patch, the tamper checks, the multilingual demo's
 * code/test separation, dataset authoring's controls.
 *
 * Why not jsdiff's `parsePatch` for this: a patch from an agent is hostile and may be
 * malformed on purpose, and a file it touches must still be listed (fail-closed), where
 * `parsePatch` throws. So this reader never throws on a malformed diff: `diff --git` always
 * starts a section (a valid hunk line never begins with it, so no hunk can hide one), hunk
 * bodies are delimited by their `@@` counts (a removed line that looks like `--- x` stays
 * content), and the text of the sections joined is the input minus what stands before the
 * first section. jsdiff's `parsePatch` checks and counts hunks where a patch must be well
 * formed (`countHunks`, dataset authoring).
 *
 * The one thing it refuses is a path it cannot name: bytes that are not UTF-8
 * (`"b/zz\377_test.go"`), a U+FFFD (what a lossy decoding leaves of such bytes) or a NUL. Read
 * lossily, such a path names another file than the one git writes, so a reset or a check of it
 * misses the real one (trust11, `multilingual-non-utf8-test-file`: a test module the
 * multilingual verifier listed as discarded was collected by pytest). It throws
 * `UndecodablePathError`, and every caller that reads an agent's diff refuses that diff
 * (reward 0).
 */
import { inflateSync } from 'node:zlib';
import { parsePatch } from 'diff';

/** One file a diff touches. Paths are repository-relative, without `a/` and `b/`. */
export interface PatchFile {
  /** Path before the change; undefined when the diff creates the file. */
  oldPath?: string;
  /** Path after the change; undefined when the diff deletes the file. */
  newPath?: string;
  /** True when the diff creates the file (`--- /dev/null` or `new file mode`). */
  created: boolean;
  /** True when the diff deletes the file (`+++ /dev/null` or `deleted file mode`). */
  deleted: boolean;
}

/** One file section of a diff: its paths and its text. */
export interface DiffSection extends PatchFile {
  /** Header text up to the first hunk (`diff --git`, `index`, modes, `---`, `+++`, binary data). */
  header: string;
  /** Each hunk's text, starting with its `@@` line, up to its counted lines (and a `\` line after them). */
  hunks: string[];
  /** Text after the last hunk that is no part of it (a signature, or anything else). */
  trailing: string;
}

/**
 * A path in a diff that berth cannot name: its bytes are not UTF-8, or it holds U+FFFD or a NUL.
 * The diff that holds it is refused.
 */
export class UndecodablePathError extends Error {
  override readonly name = 'UndecodablePathError';
  constructor(readonly path: string) {
    // As git quotes it, else as JSON (a NUL or U+FFFD shown as an escape).
    const shown = path.startsWith('"') ? path : JSON.stringify(path).replace(/\uFFFD/g, '\\uFFFD');
    super(`the diff names a path that is not UTF-8 text (refused): ${shown}`);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** `path` as it is, or UndecodablePathError when it holds U+FFFD or a NUL. */
function nameable(path: string, raw = path): string {
  if (path.includes('\uFFFD') || path.includes('\0')) throw new UndecodablePathError(raw);
  return path;
}

/**
 * Unquotes a git-quoted path (`"a/sp\303\251cial"`): C escapes and octal bytes.
 * @throws UndecodablePathError when the bytes are not UTF-8, or the path holds U+FFFD or a NUL.
 */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"') || raw.length < 2) return nameable(raw);
  const body = raw.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, '\\': 92, a: 7, b: 8, f: 12, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      // A whole code point (an astral character is two code units).
      const char = String.fromCodePoint(body.codePointAt(i) as number);
      for (const b of Buffer.from(char, 'utf8')) bytes.push(b);
      i += char.length - 1;
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      const oct = body.slice(i + 1, i + 4);
      bytes.push(Number.parseInt(oct, 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  let text: string;
  try {
    text = UTF8.decode(Buffer.from(bytes));
  } catch {
    throw new UndecodablePathError(raw);
  }
  return nameable(text, raw);
}

/** A `---`/`+++` path: tab-suffixed timestamp dropped, unquoted, its first component removed; undefined for /dev/null. */
function headerPath(path: string): string | undefined {
  const clean = unquoteGitPath(path.split('\t')[0]?.replace(/\r$/, '').trimEnd() ?? '');
  if (clean === '/dev/null') return undefined;
  return stripPrefix(clean);
}

/**
 * Removes a path's first component, as `git apply` and `patch -p1` do, whatever it is: git's
 * `a/` and `b/`, the mnemonic `c/`, `i/`, `w/`, `o/`, or `--src-prefix=z/` (breaker10 F4: only
 * `[abciwo]/` was removed, so `z/logging.py` was listed where git wrote `logging.py`, and every
 * check of the files a patch changed missed it). A name with no `/` is kept (neither tool
 * applies it to any file).
 */
function stripPrefix(path: string): string {
  return path.replace(/^[^/]*\//, '');
}

/** The two paths of `diff --git A B`, either possibly C-quoted; with spaces and no quotes, the halves are equal. */
function gitHeaderPaths(rest: string): [string, string] | undefined {
  const text = rest.replace(/\r$/, '');
  const quoted = /^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/.exec(text);
  if (quoted)
    return [
      stripPrefix(unquoteGitPath(quoted[1] as string)),
      stripPrefix(unquoteGitPath(quoted[2] as string)),
    ];
  // `a/P b/P` with spaces in P: both halves have the same length when the path did not change.
  const half = (text.length - 1) / 2;
  if (Number.isInteger(half) && text.slice(2, half) === text.slice(half + 3)) {
    const path = nameable(text.slice(2, half));
    return [path, path];
  }
  const middle = text.indexOf(' b/');
  if (middle > 0)
    return [stripPrefix(nameable(text.slice(0, middle))), stripPrefix(nameable(text.slice(middle + 1)))];
  return undefined;
}

/** Reads the extended header line `line` of a git section into `section`. */
function readGitHeaderLine(section: DiffSection, line: string): void {
  const text = line.replace(/\r?\n$/, '');
  if (text.startsWith('new file mode')) section.created = true;
  else if (text.startsWith('deleted file mode')) section.deleted = true;
  else if (text.startsWith('rename from ')) section.oldPath = unquoteGitPath(text.slice(12));
  else if (text.startsWith('rename to ')) section.newPath = unquoteGitPath(text.slice(10));
  else if (text.startsWith('copy from ')) section.oldPath = unquoteGitPath(text.slice(10));
  else if (text.startsWith('copy to ')) section.newPath = unquoteGitPath(text.slice(8));
}

/**
 * Splits a diff into its file sections, in order. Lines before the first file header (a commit
 * message) are dropped, unknown lines are kept in the text of their section.
 * @throws UndecodablePathError when a path in it is not UTF-8 text (never on a malformed diff).
 */
export function parseDiff(diff: string): DiffSection[] {
  const lines = diff.split(/(?<=\n)/);
  const sections: DiffSection[] = [];
  let current: DiffSection | undefined;
  let git = false;
  let oldLeft = 0;
  let newLeft = 0;
  const open = (isGit: boolean): DiffSection => {
    current = { header: '', hunks: [], trailing: '', created: false, deleted: false };
    sections.push(current);
    git = isGit;
    oldLeft = 0;
    newLeft = 0;
    return current;
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.startsWith('diff --git ')) {
      const section = open(true);
      section.header = line;
      const paths = gitHeaderPaths(line.slice('diff --git '.length).replace(/\n$/, ''));
      if (paths) [section.oldPath, section.newPath] = paths;
      continue;
    }
    if (current && (oldLeft > 0 || newLeft > 0)) {
      current.hunks[current.hunks.length - 1] += line;
      if (line.startsWith('\\')) continue;
      if (line.startsWith('-')) oldLeft--;
      else if (line.startsWith('+')) newLeft--;
      else {
        oldLeft--;
        newLeft--;
      }
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (current && hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      current.hunks.push(line);
      continue;
    }
    const next = lines[index + 1];
    if (line.startsWith('--- ') && next?.startsWith('+++ ')) {
      // The file header of a plain diff, or the `---`/`+++` pair of a git section.
      const section = current && git && current.hunks.length === 0 ? current : open(false);
      section.header += line + next;
      const oldPath = headerPath(line.slice(4).replace(/\n$/, ''));
      const newPath = headerPath(next.slice(4).replace(/\n$/, ''));
      section.oldPath = oldPath ?? (section.created ? undefined : section.oldPath);
      section.newPath = newPath ?? (section.deleted ? undefined : section.newPath);
      if (oldPath === undefined) section.created = true;
      if (newPath === undefined) section.deleted = true;
      index++;
      continue;
    }
    if (!current) continue;
    if (current.hunks.length > 0) {
      // `\ No newline at end of file` right after a hunk's last line is the hunk's; any other
      // text after a file's last hunk (a signature, anything) is not.
      if (current.trailing === '' && line.startsWith('\\')) current.hunks[current.hunks.length - 1] += line;
      else current.trailing += line;
      continue;
    }
    current.header += line;
    if (git) readGitHeaderLine(current, line);
  }
  for (const section of sections) {
    if (section.created) section.oldPath = undefined;
    if (section.deleted) section.newPath = undefined;
  }
  return sections;
}

/** git's base85 alphabet (git: base85.c). */
const BASE85 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';

/**
 * What a section's `GIT binary patch` says the file becomes: `none` (the section has no binary
 * patch), `literal` (the file's whole new content, decoded: each data line's first letter gives
 * its byte count, A-Z 1-26 and a-z 27-52, then base85 in groups of five letters, all of it
 * zlib-deflated; git: apply.c parse_binary_hunk), or `unreadable` (a `delta` against the old
 * content, a `Binary files differ` line without data, or data that does not decode).
 */
export function binaryContent(
  section: DiffSection,
): { kind: 'none' } | { kind: 'literal'; data: Buffer } | { kind: 'unreadable' } {
  const lines = section.header.split('\n').map((l) => l.replace(/\r$/, ''));
  const at = lines.indexOf('GIT binary patch');
  if (at < 0)
    return lines.some((l) => /^Binary files .* differ$/.test(l)) ? { kind: 'unreadable' } : { kind: 'none' };
  const head = /^(literal|delta) (\d+)$/.exec(lines[at + 1] ?? '');
  if (head?.[1] !== 'literal') return { kind: 'unreadable' };
  const chunks: Buffer[] = [];
  for (const line of lines.slice(at + 2)) {
    if (line === '') break;
    const c = line.charCodeAt(0);
    const count = c >= 65 && c <= 90 ? c - 64 : c >= 97 && c <= 122 ? c - 96 + 26 : -1;
    const data = line.slice(1);
    if (count < 0 || data.length % 5 !== 0 || data.length / 5 < Math.ceil(count / 4))
      return { kind: 'unreadable' };
    const out = Buffer.alloc((data.length / 5) * 4);
    for (let i = 0; i < data.length; i += 5) {
      let n = 0;
      for (let j = 0; j < 5; j++) {
        const d = BASE85.indexOf(data[i + j] as string);
        if (d < 0) return { kind: 'unreadable' };
        n = n * 85 + d;
      }
      if (n > 0xffffffff) return { kind: 'unreadable' };
      out.writeUInt32BE(n, (i / 5) * 4);
    }
    chunks.push(out.subarray(0, count));
  }
  try {
    const data = inflateSync(Buffer.concat(chunks), { maxOutputLength: 64 * 1024 * 1024 });
    if (data.length !== Number(head[2])) return { kind: 'unreadable' };
    return { kind: 'literal', data };
  } catch {
    return { kind: 'unreadable' };
  }
}

/** The text of sections joined back into a diff. */
export function sectionText(section: DiffSection): string {
  return section.header + section.hunks.join('') + section.trailing;
}

/**
 * A header line an apply tool may read: git's extended header lines, the `---`/`+++` pair, and
 * the lines of a `GIT binary patch` (its `literal`/`delta` lines, base85 data, blank lines).
 * None of them can start a section of another diff format (a context diff's `*** x`, a normal
 * diff's `1,2c3`, an ed script) in GNU patch's reading.
 */
const HEADER_LINE =
  /^(diff --git .*|index [0-9a-f]+\.\.[0-9a-f]+( [0-7]+)?|(old|new|deleted file|new file) mode [0-7]+|(dis)?similarity index \d+%|(rename|copy) (from|to) .*|Binary files .* differ|GIT binary patch|(literal|delta) \d+|(---|\+\+\+) .*|[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]*|)\r?\n?$/;

/**
 * The part of `diff` this parser placed, as the text an apply tool gets: each section's header
 * lines that `HEADER_LINE` allows and its hunks up to their counted lines. What stands before
 * the first section, after a file's last hunk or among header lines and is not such a line is
 * left out, so `git apply` and GNU `patch` apply only what berth's checks saw (breaker10 F3: a
 * context-diff section after the last hunk created a conftest.py that no check listed, through
 * `patch`'s fallback).
 * @returns the text, the number of lines left out, and every path it touches (`touchedPaths` of the text).
 * @throws UndecodablePathError (`parseDiff`).
 */
export function placedText(diff: string): { text: string; droppedLines: number; paths: string[] } {
  let text = '';
  const paths = new Set<string>();
  for (const section of parseDiff(diff)) {
    if (section.oldPath) paths.add(section.oldPath);
    if (section.newPath) paths.add(section.newPath);
    const lines = section.header.split(/(?<=\n)/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      // A `---` line only as the first of a `---`/`+++` pair, a `+++` line only as its second.
      const pair = line.startsWith('--- ')
        ? lines[i + 1]?.startsWith('+++ ') === true
        : line.startsWith('+++ ')
          ? lines[i - 1]?.startsWith('--- ') === true
          : true;
      if (line !== '' && pair && HEADER_LINE.test(line)) text += line;
    }
    text += section.hunks.join('');
  }
  const count = (s: string) => s.split('\n').length - (s.endsWith('\n') ? 1 : 0);
  return { text, droppedLines: count(diff) - count(text), paths: [...paths] };
}

/** Lists the files a unified diff touches, in order. @throws UndecodablePathError (`parseDiff`). */
export function patchFiles(patch: string): PatchFile[] {
  return parseDiff(patch).map(({ oldPath, newPath, created, deleted }) => ({
    ...(oldPath !== undefined ? { oldPath } : {}),
    ...(newPath !== undefined ? { newPath } : {}),
    created,
    deleted,
  }));
}

/** Every path a diff touches (old and new names), deduplicated, in order. @throws UndecodablePathError (`parseDiff`). */
export function touchedPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const file of patchFiles(patch)) {
    if (file.oldPath) paths.add(file.oldPath);
    if (file.newPath) paths.add(file.newPath);
  }
  return [...paths];
}

/** Number of hunks in a patch, as jsdiff's `parsePatch` counts them. Throws on a malformed patch. */
export function countHunks(patch: string): number {
  return parsePatch(patch).reduce((sum, file) => sum + file.hunks.length, 0);
}
