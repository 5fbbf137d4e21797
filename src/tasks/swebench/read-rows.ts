/**
 * Reads row files: a JSON list of objects, a JSON object keyed by id, a single
 * JSON object (one row per file), or JSONL (one object per line). Each row
 * comes with the 1-based line it starts on, so messages can name it.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { type JSONPath, visit } from 'jsonc-parser';
import { InputError, type InputIssue } from '../../errors.ts';
import { decodeUtf8Warning } from '../../util/input-files.ts';
import { jsonErrorOffset } from '../../util/json-error.ts';

/** One row as read, with where it came from. */
export interface RawRow {
  value: unknown;
  file: string;
  /** 1-based line where the row starts. */
  line: number;
  /** The key it was stored under, for a JSON object keyed by id. */
  key?: string;
  /** 0-based position in a JSON list (rows of one JSON document share a line when it is minified). */
  index?: number;
  /**
   * The 1-based line of a field of this row (`['FAIL_TO_PASS']`, `['dockerless', 'files', 'a.py']`,
   * `['FAIL_TO_PASS', 2]`), for rows of a JSON document spread over many lines; undefined
   * when the field is absent. Absent for JSONL rows, whose fields all sit on the row's line.
   */
  locate?: FieldLocator;
}

/** Finds the 1-based line of a field path inside one row (see `RawRow.locate`). */
export type FieldLocator = (path: ReadonlyArray<string | number>) => number | undefined;

/** Line (1-based) of a character offset. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Where a value at depth 1 of a JSON document starts. */
interface ValueStart {
  /** 1-based line. */
  line: number;
  /** Character offset. */
  offset: number;
}

/**
 * Start lines and offsets of the values at depth 1 of a JSON document (array
 * elements or object values), found by a scan that skips strings. Only used for messages.
 */
function topLevelValues(text: string): ValueStart[] {
  const starts: ValueStart[] = [];
  let depth = 0;
  let line = 1;
  let inString = false;
  let expectValue = false;
  let isObject = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      if (depth === 1 && (!isObject || expectValue)) {
        starts.push({ line, offset: i });
        expectValue = false;
      }
      inString = true;
      continue;
    }
    if (c === '{' || c === '[') {
      if (depth === 0) {
        isObject = c === '{';
        expectValue = !isObject;
      } else if (depth === 1 && expectValue) {
        starts.push({ line, offset: i });
        expectValue = false;
      }
      depth++;
    } else if (c === '}' || c === ']') depth--;
    else if (depth === 1 && c === ':' && isObject) expectValue = true;
    else if (depth === 1 && c === ',' && !isObject) expectValue = true;
    else if (depth === 1 && expectValue && /[-0-9tfn]/.test(c as string)) {
      starts.push({ line, offset: i });
      expectValue = false;
    }
  }
  return starts;
}

const FOUND = Symbol('found');

/**
 * A `FieldLocator` for the row that starts at `start` (on 1-based line
 * `startLine`) and ends before `end`. It walks only that row's text with
 * jsonc-parser's `visit`, skipping the children of every value off the path,
 * and stops at the field: an object key's line, or an array element's own line.
 * The row's text is read again only when a message needs a line.
 */
function fieldLocator(text: string, start: number, end: number, startLine: number): FieldLocator {
  return (path) => {
    if (path.length === 0) return startLine;
    const onPath = (p: JSONPath) => p.length <= path.length && p.every((key, i) => key === path[i]);
    const isTarget = (p: JSONPath) => p.length === path.length && onPath(p);
    let found: number | undefined;
    const element = (line: number, p: JSONPath) => {
      if (typeof p[p.length - 1] === 'number' && isTarget(p)) {
        found = line;
        throw FOUND;
      }
    };
    try {
      visit(text.slice(start, end), {
        onObjectBegin: (_offset, _length, line, _column, pathOf) => {
          const p = pathOf();
          element(line, p);
          return onPath(p);
        },
        onArrayBegin: (_offset, _length, line, _column, pathOf) => {
          const p = pathOf();
          element(line, p);
          return onPath(p);
        },
        // jsonc-parser 3.3.1 ends a skipped object or array only through these callbacks:
        // without them, everything after the first skipped value is skipped too.
        onObjectEnd: () => {},
        onArrayEnd: () => {},
        onLiteralValue: (_value, _offset, _length, line, _column, pathOf) => element(line, pathOf()),
        onObjectProperty: (property, _offset, _length, line, _column, pathOf) => {
          if (isTarget([...pathOf(), property])) {
            found = line;
            throw FOUND;
          }
        },
      });
    } catch (error) {
      if (error !== FOUND) throw error;
    }
    // visit counts lines from 0 at `start`, which sits on `startLine`.
    return found === undefined ? undefined : startLine + found;
  };
}

function jsonErrorLine(text: string, error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const position = message.match(/position (\d+)/);
  if (position) return lineOf(text, Number(position[1]));
  const lineCol = message.match(/line (\d+) column/);
  if (lineCol) return Number(lineCol[1]);
  return lineOf(text, jsonErrorOffset(text));
}

/**
 * Reads a text input file (UTF-8; invalid bytes are replaced and warned about on stderr,
 * naming the lines, see `decodeUtf8Warning`).
 * @throws InputError naming the file when it does not exist, is a folder or cannot be read.
 */
export async function readInputText(file: string): Promise<string> {
  return (await readInputTextLines(file)).text;
}

async function readInputTextLines(file: string): Promise<{ text: string; invalidLines: number[] }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a folder, expected a file'
          : code === 'EACCES'
            ? 'permission denied'
            : `cannot read: ${(error as Error).message}`;
    throw new InputError({ file }, reason, { cause: error });
  }
  return decodeUtf8Warning(bytes, file);
}

/**
 * Reads the rows of one file. A `.jsonl` file (or a `.json` file that is not one JSON
 * document but one object per line) is read line by line; blank lines are skipped.
 * @throws InputError naming the file and line of an unparsable document, or listing every
 *   unparsable line of a JSONL file, or
 *   naming the file when it is missing, a folder or unreadable.
 */
export async function readRowFile(
  file: string,
  options: {
    rowKey?: string;
    /** More keys that mark a single JSON object as one row (rather than an object keyed by id). */
    rowKeys?: readonly string[];
    /**
     * Receives each unparsable line of a JSONL file instead of it being thrown, so a
     * caller can list it with the problems of the other rows (the good rows are returned).
     */
    onBadLine?: (issue: InputIssue) => void;
  } = {},
): Promise<RawRow[]> {
  const decoded = await readInputTextLines(file);
  let text = decoded.text;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const rows = readRowText(file, text, options);
  // Invalid UTF-8 in a text field is warned about (readInputTextLines); in an id it is refused:
  // the replaced id would match no prediction, test or report.
  if (decoded.invalidLines.length > 0) {
    const keys = [options.rowKey ?? 'instance_id'];
    const issues: InputIssue[] = [];
    for (const row of rows) {
      const value = row.value as Record<string, unknown> | null;
      for (const key of keys) {
        const id = value && typeof value === 'object' ? value[key] : undefined;
        const bad = typeof id === 'string' ? id.includes('\uFFFD') : (row.key?.includes('\uFFFD') ?? false);
        if (bad) {
          issues.push({
            file,
            line: row.locate?.([key]) ?? row.line,
            field: key,
            message: 'invalid UTF-8 in the id (the file must be UTF-8)',
          });
          break;
        }
      }
    }
    if (issues.length > 0) throw InputError.all(issues);
  }
  return rows;
}

function readRowText(
  file: string,
  text: string,
  options: { rowKey?: string; rowKeys?: readonly string[]; onBadLine?: (issue: InputIssue) => void },
): RawRow[] {
  const isJsonl = extname(file).toLowerCase() === '.jsonl' || extname(file).toLowerCase() === '.ndjson';
  if (!isJsonl) {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      // A .json file holding JSON lines: read it as JSONL when its first line is a whole object.
      const firstLine = text.split('\n', 1)[0]?.trim() ?? '';
      let firstIsObject = false;
      try {
        firstIsObject = firstLine.startsWith('{') && typeof JSON.parse(firstLine) === 'object';
      } catch {}
      if (!firstIsObject) {
        const line = jsonErrorLine(text, error);
        throw new InputError(
          { file, line },
          `not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return readJsonLines(file, text, options.onBadLine);
    }
    return rowsOfDocument(file, text, document, [
      options.rowKey ?? 'instance_id',
      ...(options.rowKeys ?? []),
    ]);
  }
  return readJsonLines(file, text, options.onBadLine);
}

/** JSONL rows; every unparsable line goes to `onBadLine`, or is listed in one InputError. */
function readJsonLines(file: string, text: string, onBadLine?: (issue: InputIssue) => void): RawRow[] {
  const rows: RawRow[] = [];
  const issues: InputIssue[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === '') return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      issues.push({
        file,
        line: index + 1,
        message: `not a valid JSON line: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    rows.push({ value, file, line: index + 1 });
  });
  if (onBadLine) issues.forEach(onBadLine);
  else if (issues.length > 0) throw InputError.all(issues);
  return rows;
}

function rowsOfDocument(file: string, text: string, document: unknown, rowKeys: readonly string[]): RawRow[] {
  const isObject = document !== null && typeof document === 'object';
  if (isObject && !Array.isArray(document) && rowKeys.some((key) => key in document)) {
    return [{ value: document, file, line: 1, locate: fieldLocator(text, 0, text.length, 1) }];
  }
  if (!isObject) {
    throw new InputError(
      { file, line: 1 },
      'expected a JSON list of rows, an object keyed by id, or a single row object',
    );
  }
  const starts = topLevelValues(text);
  const located = (index: number) => {
    const at = starts[index];
    if (at === undefined) return { line: 1 };
    const end = starts[index + 1]?.offset ?? text.length;
    return { line: at.line, locate: fieldLocator(text, at.offset, end, at.line) };
  };
  if (Array.isArray(document)) {
    return document.map((value, index) => ({ value, file, index, ...located(index) }));
  }
  return Object.entries(document).map(([key, value], index) => ({ value, file, key, ...located(index) }));
}

/**
 * Lists the row files of a path: the file itself, or every `.json`/`.jsonl`/`.ndjson`
 * file under a folder (recursively, hidden entries skipped), sorted by path.
 * @throws InputError when the path does not exist or the folder holds no row file.
 */
export async function listRowFiles(path: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    throw new InputError({ file: path }, 'no such file or folder');
  }
  if (info.isFile()) return [path];
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (/\.(json|jsonl|ndjson)$/i.test(entry.name)) files.push(full);
    }
  };
  await walk(path);
  files.sort();
  if (files.length === 0) throw new InputError({ file: path }, 'the folder holds no .json or .jsonl file');
  return files;
}
