/**
 * The Kotlin Benchmark's grader, as its `tests/junit_compare.py` applies it
 * (that file mirrors multi-swe-bench's
 * `multi_swe_bench/harness/repos/kotlin/junit_parser.py` and `report.py`):
 *
 * - Reports: every `TEST*.xml` under a `build/test-results/` folder at any
 *   depth (`**\/build/test-results/**\/TEST*.xml`). The task's `test.sh`
 *   deletes stale ones before Gradle runs ({@link deleteStaleReports}).
 * - Test id: `classname.name`, each trimmed and stripped of a trailing
 *   `@<hex>` suffix; a missing classname falls back to the report file's stem,
 *   a missing name is `<unnamed>`.
 * - Parameterised cases (a `[...]` in the name or classname) are dropped when
 *   `dropParameterized` is on (the reference's default).
 * - Status of one testcase: a `<skipped>` child -> SKIP (it wins), else a
 *   `<failure>` or `<error>` child -> FAIL, else PASS. Duplicate ids, within
 *   or across files, keep the worst: FAIL > SKIP > PASS. This is NOT the
 *   registry's default precedence; it works on the raw elements.
 * - Then the Multi-SWE-bench transitions, validity checks and "every expected
 *   test lands in its category" (`multi-swe-bench.ts`).
 * - Reward 0 when no report is found, a report does not parse, or the
 *   expectations list no test. Never an exit-code fallback.
 */
import { createReadStream } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { BerthError, InputError } from '../errors.ts';
import { type JUnitElement, parseJUnit } from '../parsers/junit.ts';
import type { TestStatus } from '../parsers/types.ts';
import { gradeTransitions, MSB_CATEGORIES, type MsbExpected, parseMsbExpected } from './multi-swe-bench.ts';
import { countCategories, type GradeReport } from './report.ts';
import type { TestVerdict } from './types.ts';

/** Glob of the Gradle JUnit reports the Kotlin Benchmark grades. */
export const KOTLIN_REPORT_GLOB = '**/build/test-results/**/TEST*.xml';

const PARAM = /\[.+?\]/;
const HASH_SUFFIX = /@[0-9a-fA-F]+$/;

type KotlinStatus = 'PASS' | 'FAIL' | 'SKIP';
const PRIORITY: Record<KotlinStatus, number> = { FAIL: 3, SKIP: 2, PASS: 1 };

/** Finds the JUnit reports under `root` (absolute paths, sorted). Symbolic links are not followed. */
export async function collectReports(root: string): Promise<string[]> {
  const files = await glob([KOTLIN_REPORT_GLOB], {
    cwd: root,
    absolute: true,
    dot: true,
    followSymbolicLinks: false,
    ignore: ['**/.git/**'],
  });
  return files.sort();
}

/** Deletes the reports a previous run left under `root`, so only fresh ones count. Returns how many. */
export async function deleteStaleReports(root: string): Promise<number> {
  const files = await collectReports(root);
  await Promise.all(files.map((f) => unlink(f)));
  return files.length;
}

/** The reference's id rule (see the module comment). */
export function kotlinTestId(
  classname: string | undefined,
  name: string | undefined,
  fileStem: string,
): string {
  const strip = (part: string | undefined) => (part ?? '').trim().replace(HASH_SUFFIX, '');
  const cls = strip(classname) || fileStem.trim();
  const method = strip(name) || '<unnamed>';
  return cls ? `${cls}.${method}` : method;
}

export function isParameterized(value: string | undefined): boolean {
  return value !== undefined && PARAM.test(value);
}

function elementStatus(e: JUnitElement): KotlinStatus {
  if (e.hasSkipped) return 'SKIP';
  if (e.hasFailure || e.hasError) return 'FAIL';
  return 'PASS';
}

export interface KotlinStatusOptions {
  /** Drop parameterised cases (default true, as the reference). */
  dropParameterized?: boolean;
}

/** Folds raw testcase elements of several reports into one status per id with the Kotlin rules. */
export function kotlinStatusMap(
  reports: { file: string; elements: JUnitElement[] }[],
  options: KotlinStatusOptions = {},
): Map<string, KotlinStatus> {
  const drop = options.dropParameterized ?? true;
  const out = new Map<string, KotlinStatus>();
  for (const report of reports) {
    const stem = path.basename(report.file).replace(/\.[^.]*$/, '');
    for (const e of report.elements) {
      if (drop && (isParameterized(e.name) || isParameterized(e.classname))) continue;
      const id = kotlinTestId(e.classname, e.name, stem);
      const status = elementStatus(e);
      const previous = out.get(id);
      if (previous === undefined || PRIORITY[status] > PRIORITY[previous]) out.set(id, status);
    }
  }
  return out;
}

const TO_TEST_STATUS: Record<KotlinStatus, TestStatus> = { PASS: 'PASSED', FAIL: 'FAILED', SKIP: 'SKIPPED' };

export interface KotlinGradeOptions extends KotlinStatusOptions {
  /** Name of the expectations file, for messages. */
  expectedName?: string;
}

/** Reads and validates `expected_tests.json`. @throws InputError naming the file and field. */
export async function readKotlinExpected(file: string): Promise<MsbExpected> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InputError({ file }, `cannot read the expectations: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parseMsbExpected(value, file);
}

function zeroReport(expected: MsbExpected, error: string): GradeReport {
  const verdicts: TestVerdict[] = [];
  for (const category of MSB_CATEGORIES) {
    for (const id of expected[`${category}_tests`])
      verdicts.push({ id, category, passed: false, reason: 'missing' });
  }
  return {
    rules: 'kotlin',
    resolved: false,
    reward: 0,
    valid: false,
    error,
    verdicts,
    categories: countCategories(verdicts, [...MSB_CATEGORIES]),
    prefixMatches: [],
    warnings: [],
  };
}

/**
 * Grades JUnit report files against a Kotlin Benchmark `expected_tests.json`.
 * Never throws for a bad or missing report: that is reward 0 with the reason in `error`.
 */
export async function gradeKotlin(
  expected: MsbExpected,
  reportFiles: string[],
  options: KotlinGradeOptions = {},
): Promise<GradeReport> {
  if (reportFiles.length === 0) return zeroReport(expected, 'no JUnit report was found (reward 0)');
  const reports: { file: string; elements: JUnitElement[] }[] = [];
  const warnings: string[] = [];
  for (const file of reportFiles) {
    try {
      const result = await parseJUnit(createReadStream(file), { sourceName: file, keepElements: true });
      reports.push({ file, elements: result.elements ?? [] });
      for (const w of result.warnings) warnings.push(`${path.basename(file)}: ${w}`);
    } catch (error) {
      const message = BerthError.isInstance(error) || error instanceof Error ? error.message : String(error);
      return zeroReport(expected, `a JUnit report cannot be read (reward 0): ${message}`);
    }
  }
  const statuses = kotlinStatusMap(reports, options);
  const fix = new Map<string, TestStatus>();
  for (const [id, status] of statuses) fix.set(id, TO_TEST_STATUS[status]);
  const report = gradeTransitions(expected, fix, { rules: 'kotlin', prefix: 'never' });
  report.warnings.push(...warnings.slice(0, 50));
  return report;
}
