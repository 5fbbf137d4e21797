/**
 * `berth grade`: grade report files against an expectations file with one of
 * the rule sets in `src/grading/`.
 *
 * Expectations, by rule set:
 * - `swebench`: a SWE-bench row (JSON object, or a list holding one row, or
 *   pick one with `instanceId`) with `FAIL_TO_PASS` / `PASS_TO_PASS` as lists or
 *   JSON-encoded strings.
 * - `multi-swe-bench`: a Multi-SWE-bench row (`run_result`,
 *   `test_patch_result`, `p2p_tests`, `f2p_tests`, `s2p_tests`, `n2p_tests`).
 * - `kotlin`: a Kotlin Benchmark `expected_tests.json`; reports may be
 *   folders, searched for `**\/build/test-results/**\/TEST*.xml`.
 * Without `rules`: `expected_tests.json` -> kotlin, a row with `FAIL_TO_PASS`
 * -> swebench, one with `test_patch_result` -> multi-swe-bench.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError, UsageError } from '../errors.ts';
import { collectReports, gradeKotlin } from '../grading/kotlin-benchmark.ts';
import type { PrefixMode } from '../grading/match.ts';
import { gradeTransitions, parseMsbExpected } from '../grading/multi-swe-bench.ts';
import { countCategories, type GradeReport } from '../grading/report.ts';
import { gradeSwebench, junkIdReason, type SwebenchRules } from '../grading/swebench.ts';
import { harnessReading } from '../grading/swebench-harness.ts';
import { readReportText } from '../parsers/gzip.ts';
import { type RawRow, readInputText, readRowFile } from '../tasks/swebench/read-rows.ts';
import { decodeTestList, TestListError } from '../tasks/swebench/test-list.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import { describeFsError } from '../util/input-files.ts';
import type { GradeOutput } from './output-schemas.ts';
import { parseFiles, statusMapOf } from './parse-files.ts';

export type Rules = 'swebench' | 'multi-swe-bench' | 'kotlin';
export const RULES: readonly Rules[] = ['swebench', 'multi-swe-bench', 'kotlin'];

export interface GradeFilesOptions {
  expected: string;
  reports: string[];
  rules?: Rules;
  /** Parser for the reports (swebench, multi-swe-bench); detected when absent. */
  format?: string;
  prefix?: PrefixMode;
  /** Kotlin: keep parameterised cases (the reference drops them). */
  keepParameterized?: boolean;
  /** SWE-bench: which row of a file holding several. */
  instanceId?: string;
}

async function readJson(file: string): Promise<unknown> {
  const text = await readInputText(file);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError({ file }, `not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** Keys that mark a single JSON object as one row (SWE-bench or Multi-SWE-bench). */
const ROW_KEYS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'test_patch_result', 'f2p_tests', 'p2p_tests'];

/**
 * Reads the expected rows in every form `berth run` reads (JSON list, object keyed by
 * instance_id, single row, JSONL), each with its line, via the SWE-bench row reader.
 */
async function readExpectedRows(file: string): Promise<RawRow[]> {
  const rows = await readRowFile(file, { rowKeys: ROW_KEYS });
  if (rows.length === 0) throw new InputError({ file }, 'holds no row');
  return rows;
}

function guessRules(file: string, value: unknown): Rules {
  if (path.basename(file) === 'expected_tests.json') return 'kotlin';
  const row = Array.isArray(value) ? value[0] : value;
  if (row && typeof row === 'object') {
    if ('FAIL_TO_PASS' in row || 'PASS_TO_PASS' in row) return 'swebench';
    if ('test_patch_result' in row || 'f2p_tests' in row) return 'multi-swe-bench';
  }
  throw new InputError(
    { file },
    'cannot tell the rule set from this file; give --rules swebench|multi-swe-bench|kotlin',
  );
}

function idList(value: unknown, file: string, field: string, line?: number): string[] {
  if (value === undefined || value === null) return [];
  try {
    return decodeTestList(value);
  } catch (error) {
    if (!(error instanceof TestListError)) throw error;
    throw new InputError({ file, ...(line !== undefined ? { line } : {}), field }, error.message);
  }
}

function rowIdOf(row: RawRow): unknown {
  const value = row.value as Record<string, unknown> | null;
  return value && typeof value === 'object' ? (value.instance_id ?? row.key) : undefined;
}

function pickRow(rows: RawRow[], file: string, instanceId: string | undefined): RawRow {
  const candidates = instanceId ? rows.filter((r) => rowIdOf(r) === instanceId) : rows;
  const row = candidates[0];
  if (candidates.length !== 1 || row === undefined) {
    const lines = candidates.map((r) => r.line).slice(0, 5);
    throw new InputError(
      { file },
      instanceId
        ? `expected exactly one row with instance_id ${instanceId}, found ${candidates.length}${lines.length ? ` (lines ${lines.join(', ')})` : ''}`
        : `holds ${rows.length} rows; name one with --instance`,
    );
  }
  if (typeof row.value !== 'object' || row.value === null || Array.isArray(row.value))
    throw new InputError({ file, line: row.line }, 'a row must be a JSON object');
  return row;
}

async function expandReports(reports: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const report of reports) {
    const info = await stat(report).catch(() => undefined);
    if (info?.isDirectory()) out.push(...(await collectReports(report)));
    else out.push(report);
  }
  return out;
}

/** Grades `reports` against `expected`. @throws InputError / UsageError on bad input. */
export async function gradeFiles(options: GradeFilesOptions): Promise<GradeOutput> {
  if (options.rules !== undefined && !RULES.includes(options.rules)) {
    throw new UsageError(
      `unknown rules "${options.rules}"${didYouMean(options.rules, RULES)}; use one of ${RULES.join(', ')}`,
    );
  }
  // Every report must exist whatever the rules (a missing report is bad input, exit 2, never
  // graded as an unparsable one).
  for (const report of options.reports) {
    await stat(report).catch((error: unknown) => {
      throw new InputError({ file: report }, `report ${describeFsError(error) ?? (error as Error).message}`, {
        cause: error,
      });
    });
  }
  const isKotlin =
    options.rules === 'kotlin' ||
    (options.rules === undefined && path.basename(options.expected) === 'expected_tests.json');
  const value = isKotlin ? await readJson(options.expected) : undefined;
  const rows = isKotlin ? [] : await readExpectedRows(options.expected);
  const rules = options.rules ?? (isKotlin ? 'kotlin' : guessRules(options.expected, rows[0]?.value));
  let report: GradeReport;
  let swebenchRules: SwebenchRules | undefined;
  let reports = options.reports;
  if (rules === 'kotlin') {
    reports = await expandReports(options.reports);
    const expected = parseMsbExpected(value, options.expected);
    report = await gradeKotlin(expected, reports, { dropParameterized: !options.keepParameterized });
  } else if (rules === 'multi-swe-bench') {
    const row = pickRow(rows, options.expected, options.instanceId);
    const expected = parseMsbExpected(row.value, options.expected);
    const parsed = await parseFiles(reports, { format: options.format });
    report = gradeTransitions(expected, statusMapOf(parsed), {
      prefix: options.prefix,
      truncatedLog: parsed.truncated,
    });
    report.warnings.push(...parsed.warnings);
  } else {
    const picked = pickRow(rows, options.expected, options.instanceId);
    const row = picked.value as Record<string, unknown>;
    const failToPass = idList(row.FAIL_TO_PASS, options.expected, 'FAIL_TO_PASS', picked.line);
    const passToPass = idList(row.PASS_TO_PASS, options.expected, 'PASS_TO_PASS', picked.line);
    // `--rules swebench` given: the harness's verdict exactly; a row graded without it: berth's rules.
    swebenchRules = options.rules === 'swebench' ? 'swebench' : 'default';
    // Under the harness's rules every log is read as the harness reads it (`harnessReading`).
    const texts = new Map<string, string>();
    const textOf = async (file: string) =>
      texts.get(file) ?? texts.set(file, await readReportText(file)).get(file)!;
    const parsed = await parseFiles(reports, {
      format: options.format,
      ...(swebenchRules === 'swebench'
        ? { keepElements: true, reading: async (r, file) => harnessReading(r, await textOf(file)) }
        : {}),
    });
    // The harness reads junk gold ids (`[100%]`) off the log's lines: only then is the text needed.
    const needsLog =
      swebenchRules === 'swebench' && [...failToPass, ...passToPass].some((id) => junkIdReason(id));
    const log = needsLog ? (await Promise.all(reports.map(textOf))).join('\n') : '';
    const grade = gradeSwebench({
      failToPass,
      passToPass,
      parse: {
        format: parsed.format,
        tests: parsed.tests,
        counts: parsed.counts,
        ...(parsed.unnamed ? { unnamed: parsed.unnamed } : {}),
        warnings: [],
        truncated: parsed.truncated,
      },
      log,
      exitCode: 0,
      timedOut: false,
      rules: swebenchRules,
    });
    const warnings = [...parsed.warnings];
    for (const d of grade.dropped)
      warnings.push(`${d.category} id ${JSON.stringify(d.id)} dropped from the expected tests: ${d.reason}`);
    report = {
      rules: 'swebench',
      resolved: grade.resolved,
      reward: grade.resolved ? 1 : 0,
      valid: grade.status !== 'error',
      ...(grade.errorReason ? { invalidReason: grade.errorReason } : {}),
      verdicts: grade.verdicts,
      categories: countCategories(grade.verdicts, ['FAIL_TO_PASS', 'PASS_TO_PASS']),
      prefixMatches: grade.verdicts
        .filter((v) => v.matchedBy === 'prefix' || v.matchedBy === 'path-parameter')
        .map((v) => ({ expected: v.id, matched: v.matchedIds ?? (v.matchedId ? [v.matchedId] : []) })),
      ...(grade.dropped.length > 0 ? { droppedExpected: grade.dropped } : {}),
      warnings,
    };
  }
  return { ...report, rules, ...(swebenchRules ? { swebenchRules } : {}), reports } as GradeOutput;
}

/** The human-readable verdict with the reason for every test that does not count as passed. */
export function renderGradeText(output: GradeOutput, options: { limit?: number } = {}): string {
  const limit = options.limit ?? 50;
  const lines: string[] = [];
  const verdict = output.resolved ? 'RESOLVED' : 'NOT RESOLVED';
  const why = output.error ?? output.invalidReason;
  const which =
    output.swebenchRules === undefined
      ? ''
      : output.swebenchRules === 'swebench'
        ? ", the harness's verdict"
        : ", berth's default";
  lines.push(`${verdict} (reward ${output.reward}, ${output.rules} rules${which})${why ? `: ${why}` : ''}`);
  lines.push(
    Object.entries(output.categories)
      .map(([name, c]) => `${name} ${c.passed}/${c.expected}`)
      .join('  '),
  );
  const failing = output.verdicts.filter((v) => !v.passed);
  if (failing.length > 0) {
    lines.push(`not passed (${failing.length}):`);
    for (const v of failing.slice(0, limit)) {
      lines.push(`  ${v.category.padEnd(12)} ${(v.reason ?? '').padEnd(14)} ${v.id}`);
    }
    if (failing.length > limit) lines.push(`  ... and ${failing.length - limit} more (--json lists all)`);
  }
  const how = new Map(output.verdicts.map((v) => [v.id, v.matchedBy]));
  for (const [kind, header] of [
    ['prefix', 'prefix matches used for N truncated id(s):'],
    ['path-parameter', 'path-parameter matches used for N id(s) (temp folders shortened as SWE-bench does):'],
  ] as const) {
    const used = output.prefixMatches.filter((m) => (how.get(m.expected) ?? 'prefix') === kind);
    if (used.length === 0) continue;
    lines.push(header.replace('N', String(used.length)));
    for (const m of used.slice(0, limit)) lines.push(`  ${m.expected} -> ${m.matched.join(', ')}`);
  }
  for (const v of failing.slice(0, limit)) if (v.note) lines.push(`note: ${v.id}: ${v.note}`);
  if (output.droppedExpected && output.droppedExpected.length > 0) {
    lines.push(`dropped from the expected tests (${output.droppedExpected.length}, cannot name a test):`);
    for (const d of output.droppedExpected.slice(0, limit))
      lines.push(`  ${d.category.padEnd(12)} ${JSON.stringify(d.id)}: ${d.reason}`);
  }
  lines.push(`reports: ${output.reports.length}`);
  for (const w of output.warnings.slice(0, limit)) lines.push(`warning: ${w}`);
  return `${lines.join('\n')}\n`;
}
