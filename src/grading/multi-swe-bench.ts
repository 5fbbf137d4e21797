/**
 * Multi-SWE-bench grading (multi-swe-bench/multi-swe-bench,
 * `multi_swe_bench/harness/report.py` `Report.check()` at commit fc0e95bc, and
 * `gen_report.py`), also the core of the Kotlin Benchmark's `junit_compare.py`.
 *
 * Each test has a status PASS, FAIL, SKIP or NONE (absent) in three runs:
 * `run` (no patch), `test` (test patch), `fix` (test patch + the candidate
 * fix). The dataset gives `run` and `test`; the fix run is what was parsed.
 *
 * Validity checks, in order (the first that fails makes the run invalid):
 * 1. the fix run has at least one result;
 * 2. no test goes `test = PASS` -> `fix = FAIL` (over *all* tests, listed or not);
 * 3. at least one test goes `test != PASS` -> `fix = PASS`;
 * 4. no anomaly: `test` in {NONE, SKIP}, `fix = FAIL` and `run = PASS`.
 *
 * Categories (`test -> fix`): p2p = PASS -> PASS, f2p = FAIL -> PASS,
 * s2p = SKIP -> PASS, n2p = NONE -> PASS. (An older commit, 0dd97352, maps
 * FAIL -> PASS to n2p and FAIL -> FAIL to s2p; datasets made with it carry
 * those lists. This module follows the corrected mapping.)
 *
 * Resolved: the run is valid AND every test of the dataset's `p2p_tests`,
 * `f2p_tests`, `s2p_tests`, `n2p_tests` lands in that same category.
 * Statuses: PASSED -> PASS; FAILED and ERROR -> FAIL; SKIPPED -> SKIP
 * (`mapping_to_testresult`). A dataset whose run results put one test in two
 * sets is an error (the reference raises ValueError and lists the instance
 * under `error_ids`).
 */
import { z } from 'zod';
import { InputError } from '../errors.ts';
import type { TestStatus } from '../parsers/types.ts';
import { type MatchOptions, prefixMatchesOf, reasonFor, StatusIndex } from './match.ts';
import { countCategories, type GradeReport } from './report.ts';
import type { TestVerdict } from './types.ts';

export type MsbStatus = 'PASS' | 'FAIL' | 'SKIP' | 'NONE';
export const MSB_CATEGORIES = ['f2p', 'p2p', 's2p', 'n2p'] as const;
export type MsbCategory = (typeof MSB_CATEGORIES)[number];

export interface MsbRunResult {
  passed_tests: string[];
  failed_tests: string[];
  skipped_tests: string[];
}

/** What a Multi-SWE-bench instance (or a Kotlin Benchmark `expected_tests.json`) expects. */
export interface MsbExpected {
  run_result?: MsbRunResult;
  test_patch_result: MsbRunResult;
  f2p_tests: string[];
  p2p_tests: string[];
  s2p_tests: string[];
  n2p_tests: string[];
}

// Lists in expected_tests.json; objects keyed by test name in Multi-SWE-bench dataset rows.
const names = z
  .union([z.array(z.string()), z.record(z.string(), z.unknown())])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : Object.keys(v)));
const runResult = z.object({ passed_tests: names, failed_tests: names, skipped_tests: names });
const expectedSchema = z.object({
  run_result: runResult.optional(),
  test_patch_result: runResult,
  f2p_tests: names,
  p2p_tests: names,
  s2p_tests: names,
  n2p_tests: names,
});

/**
 * Validates a parsed `expected_tests.json` or Multi-SWE-bench row.
 * @throws InputError naming the file and the first bad field.
 */
export function parseMsbExpected(value: unknown, file: string): MsbExpected {
  const result = expectedSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new InputError(
      { file, field: issue?.path.join('.') },
      issue?.message ?? 'not a valid expectations file',
    );
  }
  return result.data;
}

/** `mapping_to_testresult`: PASSED -> PASS, FAILED/ERROR -> FAIL, SKIPPED -> SKIP. */
export function toMsbStatus(status: TestStatus | undefined): MsbStatus {
  if (status === undefined) return 'NONE';
  if (status === 'PASSED') return 'PASS';
  if (status === 'SKIPPED') return 'SKIP';
  return 'FAIL';
}

/** The category of a `test -> fix` transition, if it has one. */
export function categoryOf(test: MsbStatus, fix: MsbStatus): MsbCategory | undefined {
  if (fix !== 'PASS') return undefined;
  return ({ PASS: 'p2p', FAIL: 'f2p', SKIP: 's2p', NONE: 'n2p' } as const)[test];
}

function runStatuses(
  result: MsbRunResult | undefined,
  label: string,
): { map: Map<string, MsbStatus>; clash?: string } {
  const map = new Map<string, MsbStatus>();
  if (!result) return { map };
  const sets: [string[], MsbStatus][] = [
    [result.passed_tests, 'PASS'],
    [result.failed_tests, 'FAIL'],
    [result.skipped_tests, 'SKIP'],
  ];
  for (const [list, status] of sets) {
    for (const id of list) {
      const previous = map.get(id);
      if (previous !== undefined && previous !== status) {
        return { map, clash: `${label}: test \`${id}\` is listed as both ${previous} and ${status}` };
      }
      map.set(id, status);
    }
  }
  return { map };
}

export interface TransitionOptions extends MatchOptions {
  /** Rule-set name for the report. */
  rules?: string;
  /** The fix run's log was cut short: missing tests say `truncated-log`. */
  truncatedLog?: boolean;
}

/**
 * Grades a fix run against Multi-SWE-bench expectations.
 * @param fix status per test id in the fix run (any parser's statuses).
 */
export function gradeTransitions(
  expected: MsbExpected,
  fix: Map<string, TestStatus>,
  options: TransitionOptions = {},
): GradeReport {
  const rules = options.rules ?? 'multi-swe-bench';
  const warnings: string[] = [];
  const run = runStatuses(expected.run_result, 'run_result');
  const test = runStatuses(expected.test_patch_result, 'test_patch_result');
  const index = new StatusIndex(fix);
  const matchOptions: MatchOptions = { prefix: options.prefix ?? 'truncated' };

  // Per expected test: its verdict.
  const verdicts: TestVerdict[] = [];
  for (const category of MSB_CATEGORIES) {
    for (const id of expected[`${category}_tests`]) {
      const match = index.lookup(id, matchOptions);
      const testStatus = test.map.get(id) ?? 'NONE';
      const fixStatus = toMsbStatus(match.status);
      const landed = categoryOf(testStatus, fixStatus);
      const v: TestVerdict = { id, category, passed: landed === category };
      if (match.status !== undefined) v.status = match.status;
      if (!v.passed)
        v.reason =
          fixStatus === 'PASS' ? 'wrong-category' : reasonFor(match.status, options.truncatedLog === true);
      if (match.matchedBy) v.matchedBy = match.matchedBy;
      if (match.matchedBy === 'prefix') v.matchedId = match.matchedId;
      verdicts.push(v);
    }
  }
  const categories = countCategories(verdicts, [...MSB_CATEGORIES]);
  const base = {
    rules,
    verdicts,
    categories,
    prefixMatches: prefixMatchesOf(verdicts, index, matchOptions),
    warnings,
  };

  const clash = run.clash ?? test.clash;
  if (clash)
    return { ...base, resolved: false, reward: 0, valid: false, error: `bad expectations: ${clash}` };
  const expectedCount = MSB_CATEGORIES.reduce((n, c) => n + expected[`${c}_tests`].length, 0);
  if (expectedCount === 0) {
    return {
      ...base,
      resolved: false,
      reward: 0,
      valid: false,
      error: 'the expectations list no test (reward 0)',
    };
  }

  const invalidReason = checkValidity(run.map, test.map, fix);
  const resolved = invalidReason === undefined && verdicts.every((v) => v.passed);
  return {
    ...base,
    resolved,
    reward: resolved ? 1 : 0,
    valid: invalidReason === undefined,
    ...(invalidReason ? { invalidReason } : {}),
  };
}

/** `Report.check()`: returns the first failed check, or undefined when the run is valid. */
function checkValidity(
  run: Map<string, MsbStatus>,
  test: Map<string, MsbStatus>,
  fixRaw: Map<string, TestStatus>,
): string | undefined {
  if (fixRaw.size === 0) return 'no test results were captured in the fix run';
  const all = new Set<string>([...run.keys(), ...test.keys(), ...fixRaw.keys()]);
  const fixOf = (id: string) => toMsbStatus(fixRaw.get(id));
  for (const id of all) {
    if (test.get(id) === 'PASS' && fixOf(id) === 'FAIL') {
      return `test passed with the test patch but fails with the fix: \`${id}\``;
    }
  }
  let fixedSomething = false;
  for (const id of all) {
    if ((test.get(id) ?? 'NONE') !== 'PASS' && fixOf(id) === 'PASS') {
      fixedSomething = true;
      break;
    }
  }
  if (!fixedSomething) return 'the fix makes no failing, skipped or new test pass';
  for (const id of all) {
    const t = test.get(id) ?? 'NONE';
    if ((t === 'NONE' || t === 'SKIP') && fixOf(id) === 'FAIL' && run.get(id) === 'PASS') {
      return `anomalous pattern: \`${id}\` passed with no patch, is ${t} with the test patch and fails with the fix`;
    }
  }
  return undefined;
}
