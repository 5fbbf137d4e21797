/**
 * Grading compares parsed test statuses with what a task expects. One module
 * per rule set: SWE-bench (FAIL_TO_PASS / PASS_TO_PASS), Multi-SWE-bench
 * (p2p, f2p, s2p, n2p) and the Kotlin Benchmark (expected_tests.json).
 */
import type { TestStatus } from '../parsers/types.ts';

/** Why an expected test does not count as passed. */
/**
 * Why an expected test does not count as passed. `wrong-category`: it passed,
 * but its transition lands in another category than the one it was expected in
 * (Multi-SWE-bench and Kotlin Benchmark rules, e.g. an expected f2p test that
 * already passed before the fix).
 */
export type NotPassedReason = 'missing' | 'failed' | 'error' | 'skipped' | 'truncated-log' | 'wrong-category';

/** How an expected id was found among the reported ones. */
export type MatchedBy = 'exact' | 'prefix' | 'path-parameter';

/** The verdict on one expected test. */
export interface TestVerdict {
  id: string;
  /** The list it was expected in, e.g. `FAIL_TO_PASS`, `PASS_TO_PASS`, `f2p`. */
  category: string;
  /** Status found in the report, if any. */
  status?: TestStatus;
  passed: boolean;
  reason?: NotPassedReason;
  /**
   * `prefix` when the expected id was truncated and matched longer reported ids;
   * `path-parameter` when it matched a reported id whose absolute-path parameter
   * SWE-bench shortens to its last segment (see `shortenPathParameter`).
   */
  matchedBy?: MatchedBy;
  /** The reported id it matched (the first, for several). */
  matchedId?: string;
  /** Every reported id it stood for, when it matched more than one. */
  matchedIds?: string[];
  /** Why it could not be found, when the log says more than "absent" (e.g. skips reported only by location). */
  note?: string;
}
