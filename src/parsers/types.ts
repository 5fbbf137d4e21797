/**
 * Test-report parsers turn a report (JUnit XML) or a console log (pytest, go
 * test, TAP, ...) into a status per test. Parsers are registered by name in
 * `registry.ts`; the multilingual demo's `tests/config.json` names one, or the
 * registry detects the format from the first bytes.
 */

/** Status of one test, SWE-bench's vocabulary. */
export type TestStatus = 'PASSED' | 'FAILED' | 'ERROR' | 'SKIPPED';

/** One test (or, in `elements`, one occurrence of it in the report). */
export interface TestCase {
  /** Stable id, documented per format (e.g. `classname.name` for JUnit, the node id for pytest). */
  id: string;
  status: TestStatus;
  /** Duration in seconds, when the report gives it. */
  durationSec?: number;
  /** Failure or skip message, first line, when given. */
  message?: string;
  /** Format-specific extras (file, classname, retries...). */
  [key: string]: unknown;
}

export interface StatusCounts {
  passed: number;
  failed: number;
  error: number;
  skipped: number;
}

/**
 * Results a log reports without naming their test: pytest's classic progress
 * characters (`tests/test_x.py ..s`) and its `SKIPPED [2] tests/test_x.py:9: reason`
 * summary lines. They are counted, never given an invented id; a grader finds no
 * test under them (an expected test they may stand for counts as missing).
 */
export interface UnnamedResults {
  /** The file they belong to, as the runner printed it. */
  file: string;
  status: TestStatus;
  count: number;
  /** Where the runner located them (`tests/test_x.py:9`), when it said. */
  locations?: string[];
  /** Skipped results: the runner's skip summaries located in this file (1-based line, how many, why). */
  skips?: { line: number; count: number; reason: string }[];
}

/** The runner's own total disagrees with the tests parsed (e.g. unittest's `Ran N tests`). */
export interface CountMismatch {
  /** The total the runner printed. */
  reported: number;
  /** Tests parsed (named and unnamed). */
  parsed: number;
  /** The runner's summary line. */
  summary: string;
}

export interface ParseResult {
  /** Registry name of the parser that produced this. */
  format: string;
  /** One entry per test id, duplicates merged by the format's precedence. */
  tests: TestCase[];
  /** Every occurrence as reported, in order (only when `keepElements` was asked for). */
  elements?: TestCase[];
  /**
   * Results as the runner reported them: one per test, plus results it printed
   * without an id (`unnamed`); formats that run a test several times under one
   * name (go test -count=N) count every run, as go-junit-report does.
   */
  counts: StatusCounts;
  /** Results the log reports without naming their test (counted in `counts`, absent from `tests`). */
  unnamed?: UnnamedResults[];
  /** Set when the runner's own total disagrees with what was parsed (a warning says it too). */
  countMismatch?: CountMismatch;
  /** Problems that did not stop parsing (plan mismatch, bail out, garbage, duplicates...). */
  warnings: string[];
  /** True when the input looks cut short (no closing summary, unterminated XML...). */
  truncated: boolean;
}

export interface ParseOptions {
  /** Keep every per-element result in `elements` (graders with their own duplicate rules). */
  keepElements?: boolean;
  /** Name of the input, for messages. */
  sourceName?: string;
}

/** A parser: consumes chunks of a report in order, so any size parses in bounded memory. */
export interface Parser {
  /** Registry name, e.g. `pytest`, `junit`, `tap`, `go-test`. */
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly description: string;
  /**
   * How likely `head` (the first 64 KiB of the input, as text) is in this format: 0 (no) to 1 (sure).
   * Used by detection.
   */
  detect(head: string): number;
  parse(chunks: AsyncIterable<string | Uint8Array>, options?: ParseOptions): Promise<ParseResult>;
}

/** Default duplicate precedence: ERROR > FAILED > PASSED > SKIPPED (the first wins ties). */
export const STATUS_PRECEDENCE: Record<TestStatus, number> = { ERROR: 3, FAILED: 2, PASSED: 1, SKIPPED: 0 };
