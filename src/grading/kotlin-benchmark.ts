/**
 * The Kotlin Benchmark's grader, as its `tests/junit_compare.py` applies it
 * (that file mirrors multi-swe-bench's
 * `multi_swe_bench/harness/repos/kotlin/junit_parser.py` and `report.py`):
 *
 * - Reports: every `TEST*.xml` under a `build/test-results/` folder at any
 *   depth (`**\/build/test-results/**\/TEST*.xml`). The task's `test.sh`
 *   deletes stale ones before Gradle runs ({@link deleteStaleReports}).
 * - Test id: `classname.name`, each trimmed and stripped of a trailing
 *   `@<hex>` suffix; a testcase without a classname is its name alone (the
 *   dataset's collector merges every report into one file, so no file name is
 *   known: a `name` that is the fully qualified method stands for itself), a
 *   missing name is `<unnamed>`.
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

/** The reference's id rule (`_make_test_id` of junit_compare.py; see the module comment). */
export function kotlinTestId(classname: string | undefined, name: string | undefined): string {
  const strip = (part: string | undefined) => (part ?? '').trim().replace(HASH_SUFFIX, '');
  const cls = strip(classname);
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
    for (const e of report.elements) {
      if (drop && (isParameterized(e.name) || isParameterized(e.classname))) continue;
      const id = kotlinTestId(e.classname, e.name);
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

/**
 * Where berth's Kotlin verdict and the dataset's own pipeline (`test.sh`, its
 * `kotlin_logs_collector.sh` and `junit_compare.py`) part ways, with the
 * reason, for the disagreement berth records. Known causes, in the reference:
 * - no JUnit report at all: test.sh falls back to `$?` of
 *   `./gradlew ... || true`, always 0, and writes reward 1 (berth: 0, fail-closed);
 * - a report that starts with a UTF-8 byte-order mark: the collector drops a
 *   report's `<?xml` line only when the line starts with it, so the declaration
 *   lands inside the merged file and Python's XML parser rejects it (reward 0);
 * - a character reference XML 1.0 forbids (`&#x1B;`, which Gradle writes for
 *   the ANSI colours of captured output): Python's parser rejects the merged
 *   file (reward 0). berth reads such reports (the tests' outcomes are intact).
 * Otherwise the reason quotes the reference's own message from test.sh's output
 * (`INVALID report: ...`, `ERROR: ...`, `... NOT in ..._map ...`) beside berth's.
 */
export interface KotlinDisagreementInput {
  /** The reward test.sh wrote (undefined: none). */
  referenceReward: number | undefined;
  /** berth's grade. */
  report: GradeReport;
  /** The report files berth graded, with their first bytes and whether a forbidden character reference occurs in them. */
  files: { file: string; bom: boolean; forbiddenCharRef: boolean }[];
  /** test.sh's output (stdout and stderr), possibly cut. */
  testShOutput: string;
}

export interface KotlinDisagreement {
  berth_reward: number;
  reference_reward: number | null;
  reason: string;
}

/** A character reference to a character XML 1.0 forbids (C0 controls other than tab, LF, CR). */
export const FORBIDDEN_CHAR_REF = /&#(?:x0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F])|0*(?:[0-8]|1[124-9]|2\d|3[01]));/;

/** The disagreement, or undefined when both give the same reward. */
export function kotlinDisagreement(input: KotlinDisagreementInput): KotlinDisagreement | undefined {
  const ref = input.referenceReward;
  const ours = input.report.reward;
  if (ref !== undefined && ref === ours) return undefined;
  const reasons: string[] = [];
  const names = (list: typeof input.files) =>
    list
      .slice(0, 3)
      .map((f) => path.basename(f.file))
      .join(', ') + (list.length > 3 ? ', ...' : '');
  if (ref === undefined) reasons.push("the dataset's test.sh wrote no reward");
  if (input.files.length === 0 && ref === 1)
    reasons.push(
      "no JUnit report exists: the dataset's test.sh falls back to the exit code of `./gradlew ... || true`, which is always 0, and writes reward 1; berth grades no report as reward 0 (fail-closed)",
    );
  const bom = input.files.filter((f) => f.bom);
  if (bom.length > 0 && ref === 0)
    reasons.push(
      `${names(bom)} start(s) with a UTF-8 byte-order mark: the dataset's collector then keeps the report's <?xml declaration inside the merged file, which Python's XML parser rejects (reward 0); berth reads the report`,
    );
  const refs = input.files.filter((f) => f.forbiddenCharRef);
  if (refs.length > 0 && ref === 0)
    reasons.push(
      `${names(refs)} hold(s) a character reference XML 1.0 forbids (such as &#x1B;, written by Gradle for ANSI colours in captured output): Python's XML parser rejects the merged report (reward 0); berth reads the report`,
    );
  if (reasons.length === 0) {
    const theirs = referenceMessages(input.testShOutput);
    const berth =
      input.report.error ??
      input.report.invalidReason ??
      (input.report.resolved
        ? 'every expected test landed in its category'
        : `not passed: ${input.report.verdicts
            .filter((v) => !v.passed)
            .slice(0, 3)
            .map((v) => `${v.category} ${v.reason ?? 'failed'} ${v.id}`)
            .join('; ')}`);
    reasons.push(`reference: ${theirs.length > 0 ? theirs.join(' | ') : '(no message)'}; berth: ${berth}`);
  }
  return { berth_reward: ours, reference_reward: ref ?? null, reason: reasons.join('; ') };
}

/** The lines junit_compare.py and test.sh print to explain their reward. */
function referenceMessages(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split('\n')) {
    const t = line.trim();
    if (
      /^(?:INVALID report:|ERROR:|WARNING:|Verification failed:|All \d+ f2p)/.test(t) ||
      /^(?:f2p|p2p|s2p|n2p) NOT in /.test(t)
    )
      out.push(t.slice(0, 300));
    if (out.length >= 4) break;
  }
  return out;
}

/** What `kotlinDisagreement` needs to know of a report file: a BOM, a forbidden character reference. */
export async function inspectReport(
  file: string,
): Promise<{ file: string; bom: boolean; forbiddenCharRef: boolean }> {
  const text = await readFile(file).then(
    (b) => b.subarray(0, 32 * 1024 * 1024).toString('latin1'),
    () => '',
  );
  return { file, bom: text.startsWith('\xef\xbb\xbf'), forbiddenCharRef: FORBIDDEN_CHAR_REF.test(text) };
}
