/**
 * SWE-bench grading, current rules (SWE-bench HEAD `swebench/harness/grading.py`):
 *
 * - A FAIL_TO_PASS test passes only when reported PASSED; missing, FAILED, ERROR
 *   and SKIPPED count as failed (a skipped F2P test fails: SWE-bench PR #598).
 * - A PASS_TO_PASS test holds when reported PASSED or SKIPPED ("a skipped test is
 *   not a regression"); missing, FAILED and ERROR are regressions.
 * - A missing test counts as failed (SWE-bench issue #139).
 * - An expected id cut mid-parameter (more `[` than `]`) matches reported ids by
 *   prefix (SWE-bench PR #617), with the order-independent rule of `match.ts`.
 * - resolved = every FAIL_TO_PASS and every PASS_TO_PASS test passes, and the log is valid.
 * - The log is invalid (`error`, never resolved) when the run timed out, when it
 *   parses to nothing while the runner shows no sign of having run, or when the
 *   test command exited non-zero while no test is reported FAILED or ERROR.
 */

import type { ParseResult, TestStatus } from '../parsers/types.ts';
import { StatusIndex, verdict } from './match.ts';
import type { TestVerdict } from './types.ts';

/** Pass count over total of one category. */
export interface CategoryCount {
  passed: number;
  total: number;
}

export interface SwebenchGradeInput {
  failToPass: string[];
  passToPass: string[];
  /** Parsed statuses of the run; undefined when nothing could be parsed. */
  parse: ParseResult | undefined;
  /** The text the parse came from (marker slice or whole log), to look for signs the runner ran. */
  log: string;
  /** Exit code of the test command; null when killed by a signal. */
  exitCode: number | null;
  timedOut: boolean;
  /** Timeout used, in seconds (for the message). */
  timeoutSec?: number;
}

export interface SwebenchGrade {
  /** `error`: the log cannot be trusted (never resolved); see `errorReason`. */
  status: 'resolved' | 'unresolved' | 'error';
  resolved: boolean;
  errorReason?: string;
  FAIL_TO_PASS: CategoryCount;
  PASS_TO_PASS: CategoryCount;
  /** One verdict per expected test; every test not passed has a `reason`. */
  verdicts: TestVerdict[];
}

/**
 * Signs that a test runner ran at least one test, with non-zero counts
 * (SWE-bench's SUITE_RAN evidence, plus pytest, TAP and node:test summaries).
 */
const SUITE_RAN: RegExp[] = [
  /Executed [1-9]\d* of \d+/,
  /TOTAL: [1-9]\d* (SUCCESS|FAILED)/,
  /\b[1-9]\d* passing\b/,
  /Tests:\s+[1-9]\d*/,
  /Test Suites: .*\b[1-9]\d* total/,
  /^# tests [1-9]\d*/m,
  /\b[1-9]\d* specs?, \d+ failures?/,
  /': ok$/m,
  /\bcollected [1-9]\d* items?\b/,
  /^=+ .*\b[1-9]\d* (passed|failed|errors?)\b.* in [\d.]+s/m,
  /^1\.\.[1-9]\d*\s*$/m,
  /^ℹ tests [1-9]\d*$/m,
  /^Ran [1-9]\d* tests? in /m,
];

/** True when the log shows a test runner ran at least one test. */
export function suiteRan(log: string): boolean {
  return SUITE_RAN.some((re) => re.test(log));
}

const PASSING_F2P: ReadonlySet<TestStatus> = new Set(['PASSED']);
const HOLDING_P2P: ReadonlySet<TestStatus> = new Set(['PASSED', 'SKIPPED']);

/**
 * The verdicts of one category. Ids are looked up with `match.ts`: exact, then
 * (for an id cut mid-parameter, more `[` than `]`) by prefix. Among several
 * prefix matches the status is PASSED when all passed, else the worst
 * non-passing one, which gives the same pass/not-pass verdict as SWE-bench's
 * "all matches agree" rule for both categories, independent of log order
 * (SWE-bench issue #663).
 */
function verdictsFor(
  category: 'FAIL_TO_PASS' | 'PASS_TO_PASS',
  ids: string[],
  index: StatusIndex,
  truncatedLog: boolean,
): TestVerdict[] {
  const passing = category === 'FAIL_TO_PASS' ? PASSING_F2P : HOLDING_P2P;
  return ids.map((id) => verdict(index, id, category, (status) => passing.has(status), { truncatedLog }));
}

function count(verdicts: TestVerdict[]): CategoryCount {
  return { passed: verdicts.filter((v) => v.passed).length, total: verdicts.length };
}

/** Grades one test run against an instance's FAIL_TO_PASS and PASS_TO_PASS lists. */
export function gradeSwebench(input: SwebenchGradeInput): SwebenchGrade {
  const tests = input.parse?.tests ?? [];
  const index = new StatusIndex(tests);
  const truncated = input.parse?.truncated ?? false;
  const verdicts = [
    ...verdictsFor('FAIL_TO_PASS', input.failToPass, index, truncated),
    ...verdictsFor('PASS_TO_PASS', input.passToPass, index, truncated),
  ];
  const f2p = count(verdicts.filter((v) => v.category === 'FAIL_TO_PASS'));
  const p2p = count(verdicts.filter((v) => v.category === 'PASS_TO_PASS'));

  let errorReason: string | undefined;
  if (input.timedOut) {
    errorReason = `the test run timed out${input.timeoutSec !== undefined ? ` after ${input.timeoutSec} s` : ''}`;
  } else if (tests.length === 0 && !suiteRan(input.log)) {
    errorReason = 'the log parses to no test result and shows no sign that the test runner ran';
  } else if (input.exitCode === null) {
    errorReason = 'the test command was killed by a signal';
  } else if (
    input.exitCode !== 0 &&
    tests.length > 0 &&
    !tests.some((t) => t.status === 'FAILED' || t.status === 'ERROR')
  ) {
    errorReason = `the test command exited ${input.exitCode} but no test is reported FAILED or ERROR (output does not match the exit code)`;
  }
  if (errorReason) {
    for (const v of verdicts) {
      if (v.passed) continue;
      v.reason ??= 'missing';
    }
    return { status: 'error', resolved: false, errorReason, FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p, verdicts };
  }
  const resolved = f2p.passed === f2p.total && p2p.passed === p2p.total;
  return {
    status: resolved ? 'resolved' : 'unresolved',
    resolved,
    FAIL_TO_PASS: f2p,
    PASS_TO_PASS: p2p,
    verdicts,
  };
}
