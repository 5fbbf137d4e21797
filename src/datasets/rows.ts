/**
 * Reading and writing SWE-bench rows for dataset authoring. A file is a JSON
 * list, a JSON object keyed by instance_id, or JSONL (one object a line).
 * Rows are kept as plain objects so every field survives a round trip.
 */
import { readFile } from 'node:fs/promises';
import { InputError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';

/** A row as read, with where it came from (for messages). */
export interface RowAt {
  row: Record<string, unknown>;
  file: string;
  /** 1-based line for JSONL; undefined for JSON documents. */
  line?: number;
}

/** The DockerLess part of a row (the seed's `dockerless` object). */
export interface DockerLessSpec {
  /** Text files of the repository at base_commit: path -> UTF-8 content. */
  files?: Record<string, string>;
  /** Shell command; `{tests}` is replaced by `test_files` joined with spaces. */
  test_cmd: string;
  test_files: string[];
  /** Set-up command run before the agent (network allowed). */
  install?: string;
  [key: string]: unknown;
}

/** Reads every row of a SWE-bench file. Throws `InputError` naming file, line and field. */
export async function readRows(file: string): Promise<RowAt[]> {
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new InputError({ file }, `cannot read: ${(error as Error).message}`);
  });
  const trimmed = text.trimStart();
  let rows: RowAt[];
  if (trimmed.startsWith('[') || (trimmed.startsWith('{') && !looksLikeJsonl(trimmed))) {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new InputError({ file }, `not valid JSON: ${(error as Error).message}`);
    }
    if (Array.isArray(document)) rows = document.map((row) => ({ row: asObject(row, file), file }));
    else if (isObject(document) && typeof document.instance_id === 'string') rows = [{ row: document, file }];
    else if (isObject(document)) {
      rows = Object.entries(document).map(([key, row]) => {
        const value = asObject(row, file);
        return { row: { instance_id: key, ...value }, file };
      });
    } else throw new InputError({ file }, 'expected a JSON list or object of rows');
  } else {
    rows = [];
    const lines = text.split('\n');
    for (let index = 0; index < lines.length; index += 1) {
      const line = (lines[index] as string).trim();
      if (line === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new InputError({ file, line: index + 1 }, `not valid JSON: ${(error as Error).message}`);
      }
      if (!isObject(value)) throw new InputError({ file, line: index + 1 }, 'expected a JSON object');
      rows.push({ row: value, file, line: index + 1 });
    }
  }
  const seen = new Map<string, RowAt>();
  for (const at of rows) {
    const id = at.row.instance_id;
    if (typeof id !== 'string' || id === '') {
      throw new InputError({ file, line: at.line, field: 'instance_id' }, 'missing or not a string');
    }
    const before = seen.get(id);
    if (before) {
      throw new InputError(
        { file, line: at.line, field: 'instance_id' },
        `duplicate instance_id ${JSON.stringify(id)} (first at line ${before.line ?? '?'})`,
      );
    }
    seen.set(id, at);
  }
  return rows;
}

/** Writes rows as JSONL, atomically. */
export async function writeRows(file: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  await writeFileAtomic(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

/**
 * Reads a FAIL_TO_PASS / PASS_TO_PASS value: a list, a JSON-encoded string (SWE-bench's
 * own encoding) or a Python-repr string (`['a', "b's"]`, written by some tools).
 */
export function readTestList(
  value: unknown,
  where: { file: string; line?: number; field: string },
): string[] {
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return [];
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string'))
        return parsed as string[];
    } catch {
      const repr = parsePythonStringList(text);
      if (repr) return repr;
    }
  }
  throw new InputError(
    where,
    'expected a list of test ids (a list, a JSON-encoded string or a Python list repr)',
  );
}

function parsePythonStringList(text: string): string[] | undefined {
  if (!text.startsWith('[') || !text.endsWith(']')) return undefined;
  const items: string[] = [];
  const body = text.slice(1, -1);
  const item = /\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*(,|$)/y;
  let position = 0;
  while (position < body.length) {
    item.lastIndex = position;
    const match = item.exec(body);
    if (!match) return body.slice(position).trim() === '' ? items : undefined;
    const raw = match[1] ?? match[2] ?? '';
    items.push(raw.replace(/\\(.)/g, (_, char: string) => ({ n: '\n', t: '\t', r: '\r' })[char] ?? char));
    position = item.lastIndex;
    if (match[3] === '') break;
  }
  return items;
}

function looksLikeJsonl(text: string): boolean {
  const firstLine = text.split('\n', 1)[0] ?? '';
  try {
    JSON.parse(firstLine);
    return text.trim().includes('\n');
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown, file: string): Record<string, unknown> {
  if (!isObject(value)) throw new InputError({ file }, 'every row must be a JSON object');
  return value;
}
