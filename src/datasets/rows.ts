/**
 * Reading and writing SWE-bench rows for dataset authoring, on top of the
 * loader's row reader (`tasks/swebench/read-rows.ts`: a JSON list, a JSON
 * object keyed by instance_id, a single row object, or JSONL). Rows are kept
 * as plain objects so every field survives a round trip.
 */
import { InputError, type InputIssue } from '../errors.ts';
import { RowCheck } from '../tasks/swebench/load.ts';
import { type FieldLocator, listRowFiles, type RawRow, readRowFile } from '../tasks/swebench/read-rows.ts';
import { decodeTestList, TestListError } from '../tasks/swebench/test-list.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';

/** A row as read, with where it came from (for messages). */
export interface RowAt {
  row: Record<string, unknown>;
  file: string;
  /** 1-based line where the row starts. */
  line?: number;
  /** Position in a JSON list, or the key in an object keyed by id (messages name the field `[3].patch`). */
  index?: number;
  key?: string;
  /** The line of a field, for rows spread over many lines (see `RawRow.locate`). */
  locate?: FieldLocator;
}

/** The loader's view of a row (what `berth run` reads), for `rowToTask`. */
export function rawRowOf(at: RowAt): RawRow {
  return {
    value: at.row,
    file: at.file,
    line: at.line ?? 1,
    ...(at.index !== undefined ? { index: at.index } : {}),
    ...(at.key !== undefined ? { key: at.key } : {}),
    ...(at.locate ? { locate: at.locate } : {}),
  };
}

/**
 * Checks every row with the loader `berth run` uses (`RowCheck`, the same
 * rule in the same place), so a command that does not run the rows
 * (`berth dataset controls`) refuses a broken one up front with the message
 * `berth run` gives.
 * @throws InputError listing every refused row (file, line and field of each; exit 2).
 */
export function checkRowsLoad(rows: readonly RowAt[]): void {
  const check = new RowCheck();
  for (const at of rows) check.add(rawRowOf(at));
  check.tasks();
}

/**
 * Reads every row of a SWE-bench file, or of every row file under a folder (found as
 * `berth run -p` finds them: `listRowFiles`, `.json`/`.jsonl`/`.ndjson`, sorted by path).
 * Every row is read before anything is refused, so one error lists every bad row.
 * @throws InputError listing every problem, each naming file, line and field: unparsable
 *   input, a row that is not an object, a missing instance_id, a duplicate instance_id (also
 *   across files), a missing path or a folder without row files.
 */
export async function readRows(path: string): Promise<RowAt[]> {
  const issues: InputIssue[] = [];
  const seen = new Map<string, RowAt>();
  const rows: RowAt[] = [];
  for (const file of await listRowFiles(path)) {
    const fileIssues: InputIssue[] = [];
    const raw = await readRowFile(file, { onBadLine: (issue) => fileIssues.push(issue) }).catch(
      (error: unknown) => {
        if (error instanceof InputError) throw error;
        throw new InputError({ file }, `cannot read: ${(error as Error).message}`);
      },
    );
    for (const { value, line, key, index, locate } of raw) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        fileIssues.push({ file, line, message: 'every row must be a JSON object' });
        continue;
      }
      const row =
        key !== undefined && !('instance_id' in value)
          ? { instance_id: key, ...value }
          : (value as Record<string, unknown>);
      const id = row.instance_id;
      const idLine = locate?.(['instance_id']) ?? line;
      if (typeof id !== 'string' || id === '') {
        fileIssues.push({ file, line: idLine, field: 'instance_id', message: 'missing or not a string' });
        continue;
      }
      const before = seen.get(id);
      if (before) {
        const where = before.locate?.(['instance_id']) ?? before.line;
        fileIssues.push({
          file,
          line: idLine,
          field: 'instance_id',
          message: `duplicate instance_id ${JSON.stringify(id)} (first at ${before.file === file ? 'line ' : `${before.file}:`}${where})`,
        });
        continue;
      }
      const at: RowAt = {
        row,
        file,
        line,
        ...(index !== undefined ? { index } : {}),
        ...(key !== undefined ? { key } : {}),
        ...(locate ? { locate } : {}),
      };
      seen.set(id, at);
      rows.push(at);
    }
    issues.push(...fileIssues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  }
  if (issues.length > 0) throw InputError.all(issues);
  return rows;
}

/** Writes rows as JSONL, atomically. */
export async function writeRows(file: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  await writeFileAtomic(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

/**
 * Reads a FAIL_TO_PASS / PASS_TO_PASS value (a list, a JSON-encoded string or a
 * Python-repr string; see `decodeTestList`).
 * @throws InputError naming the row's file, line and field.
 */
export function readTestList(
  value: unknown,
  where: { file: string; line?: number; field: string },
): string[] {
  try {
    return decodeTestList(value);
  } catch (error) {
    if (error instanceof TestListError) throw new InputError(where, error.message);
    throw error;
  }
}
