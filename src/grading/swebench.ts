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
 * - Expected ids that cannot name a test (`[100%]`, `[`, `"`: pytest progress
 *   columns and fragments that SWE-bench's own parser put into a few gold
 *   lists) are dropped from the lists by default, and the drop is recorded
 *   (`dropped`); under `rules: 'swebench'` they are looked up as the harness's
 *   `parse_log_pytest` reads the log (a line `PASSED [100%]` gives test `[100%]`).
 */

import type { ParseResult, TestStatus, UnnamedResults } from '../parsers/types.ts';
import { StatusIndex, verdict } from './match.ts';
import type { TestVerdict } from './types.ts';

/**
 * Which rules grade a SWE-bench instance: `default`, berth's (stricter than the
 * harness where the harness is wrong; every difference is listed in
 * docs/parsers-junit-and-grading.md), or `swebench`, the SWE-bench harness's
 * verdict exactly (`--rules swebench`).
 */
export type SwebenchRules = 'default' | 'swebench';

/** An expected id dropped from a gold list because it cannot name a test. */
export interface DroppedExpected {
  id: string;
  category: 'FAIL_TO_PASS' | 'PASS_TO_PASS';
  reason: string;
}

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
  /** Default `default`; `swebench` grades exactly as the harness (see `SwebenchRules`). */
  rules?: SwebenchRules;
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
  /** Expected ids dropped because they cannot name a test (default rules only). */
  dropped: DroppedExpected[];
}

/**
 * Why an expected id cannot name a test, or undefined when it can: empty, a
 * pytest progress column (`[100%]`, `[ 50%]`, `[3/5]`, possibly with the rule
 * of dashes that followed it), or no letter or digit at all (`[`, `"`).
 * Ids like `#15789` stay: Django prints a docstring line as the test's name,
 * and its parser (SWE-bench's and berth's) gives that line as the id.
 */
export function junkIdReason(id: string): string | undefined {
  if (id.trim() === '') return 'empty';
  if (/^\[\s*\d+(?:%|\/\d+)\]/.test(id.trim())) return 'a pytest progress column, not a test';
  if (!/[\p{L}\p{N}]/u.test(id)) return 'no letter or digit: a fragment, not a test';
  return undefined;
}

const HARNESS_WORDS = ['FAILED', 'PASSED', 'SKIPPED', 'ERROR', 'XFAIL'] as const;

/**
 * The statuses SWE-bench's `parse_log_pytest` (HEAD) reads from a log, for the
 * given ids only: a line that starts with a status word, ` - ` replaced by a
 * space on FAILED lines, split on whitespace; the second field is the id, the
 * first the status; `SKIPPED [N]` skip summaries are not tests; a later line
 * wins. XFAIL counts as PASSED (the harness's `test_passed`).
 * @param ids the ids to read; every id the log names when undefined.
 */
export function harnessPytestStatuses(log: string, ids?: ReadonlySet<string>): Map<string, TestStatus> {
  const out = new Map<string, TestStatus>();
  if (ids?.size === 0) return out;
  for (let line of log.split('\n')) {
    const word = HARNESS_WORDS.find((w) => line.startsWith(w));
    if (!word) continue;
    if (word === 'FAILED') line = line.replaceAll(' - ', ' ');
    const fields = line.split(/\s+/).filter((f) => f !== '');
    if (fields.length <= 1) continue;
    const id = fields[1] as string;
    if (word === 'SKIPPED' && /^\[\d+\]$/.test(id)) continue;
    if (ids && !ids.has(id)) continue;
    // `fields[0]` may be longer than the word (`PASSEDX`): the harness keeps it, and it is no status.
    const status = fields[0] === word ? (word === 'XFAIL' ? 'PASSED' : word) : undefined;
    if (status) out.set(id, status);
    else out.delete(id);
  }
  return out;
}

/**
 * A note for an expected test the log does not name, when the log reports
 * results without ids in its file (pytest's skips by location, classic progress).
 */
function unnamedNote(id: string, unnamed: readonly UnnamedResults[]): string | undefined {
  const file = id.split('::')[0];
  const here = unnamed.filter((u) => u.file === file);
  if (here.length === 0) return undefined;
  const parts = here.map(
    (u) => `${u.count} ${u.status.toLowerCase()}${u.locations ? ` (${u.locations.join(', ')})` : ''}`,
  );
  return `not named in the log, which reports ${parts.join(', ')} result(s) in ${file} without a test id`;
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
  const rules = input.rules ?? 'default';
  const dropped: DroppedExpected[] = [];
  const junk = new Set<string>();
  const keep = (category: DroppedExpected['category'], ids: string[]): string[] =>
    ids.filter((id) => {
      const reason = junkIdReason(id);
      if (reason === undefined) return true;
      if (rules === 'swebench') {
        junk.add(id);
        return true;
      }
      dropped.push({ id, category, reason });
      return false;
    });
  const failToPass = keep('FAIL_TO_PASS', input.failToPass);
  const passToPass = keep('PASS_TO_PASS', input.passToPass);
  let statuses: Map<string, TestStatus> | undefined;
  if (junk.size > 0) {
    // The harness's parser gives these ids (from progress and fragment lines berth's parser never
    // takes as tests); they are looked up its way, everything else berth's way.
    statuses = new Map(tests.map((t) => [t.id, t.status]));
    for (const id of junk) statuses.delete(id);
    for (const [id, status] of harnessPytestStatuses(input.log, junk)) statuses.set(id, status);
  }
  const index = new StatusIndex(statuses ?? tests);
  const truncated = input.parse?.truncated ?? false;
  const verdicts = [
    ...verdictsFor('FAIL_TO_PASS', failToPass, index, truncated),
    ...verdictsFor('PASS_TO_PASS', passToPass, index, truncated),
  ];
  const unnamed = input.parse?.unnamed ?? [];
  if (unnamed.length > 0) {
    for (const v of verdicts) {
      if (v.status !== undefined) continue;
      const note = unnamedNote(v.id, unnamed);
      if (note) v.note = note;
    }
  }
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
    return {
      status: 'error',
      resolved: false,
      errorReason,
      FAIL_TO_PASS: f2p,
      PASS_TO_PASS: p2p,
      verdicts,
      dropped,
    };
  }
  const resolved = f2p.passed === f2p.total && p2p.passed === p2p.total;
  return {
    status: resolved ? 'resolved' : 'unresolved',
    resolved,
    FAIL_TO_PASS: f2p,
    PASS_TO_PASS: p2p,
    verdicts,
    dropped,
  };
}
