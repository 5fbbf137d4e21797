/**
 * The multilingual demo's reward (seed step 6-7, harbor-format §8.3): parse the
 * test log with the parser `tests/config.json` names, then reward 1 only when
 * every f2p and every p2p test PASSED. p2f and f2f are reported, never gating.
 * Only PASSED counts as passing: a missing test fails (SWE-bench's rule), and
 * so does a skipped one (the seed requires every listed test to pass).
 */
import type { NotPassedReason, TestVerdict } from '../../grading/types.ts';
import type { ParseResult, TestStatus } from '../../parsers/types.ts';

export interface MultilingualGrade {
  /** 1 when every f2p and p2p test passed, else 0. */
  reward: number;
  resolved: boolean;
  /** Passed / total per list. */
  counts: Record<'f2p' | 'p2p' | 'p2f' | 'f2f', { passed: number; total: number }>;
  /** One verdict per listed test, gating lists first. */
  verdicts: TestVerdict[];
}

const REASON: Record<TestStatus, NotPassedReason | undefined> = {
  PASSED: undefined,
  FAILED: 'failed',
  ERROR: 'error',
  SKIPPED: 'skipped',
};

/** Grades a parsed log against the four lists. */
export function gradeMultilingual(
  result: Pick<ParseResult, 'tests' | 'truncated'>,
  lists: { f2p: string[]; p2p: string[]; p2f: string[]; f2f: string[] },
): MultilingualGrade {
  const status = new Map<string, TestStatus>();
  for (const test of result.tests) status.set(test.id, test.status);
  const verdicts: TestVerdict[] = [];
  const counts = {} as MultilingualGrade['counts'];
  for (const category of ['f2p', 'p2p', 'p2f', 'f2f'] as const) {
    counts[category] = { passed: 0, total: lists[category].length };
    for (const id of lists[category]) {
      const found = status.get(id);
      const passed = found === 'PASSED';
      if (passed) counts[category].passed += 1;
      const verdict: TestVerdict = { id, category, passed, matchedBy: found ? 'exact' : undefined };
      if (found) verdict.status = found;
      if (!passed) verdict.reason = found ? REASON[found] : result.truncated ? 'truncated-log' : 'missing';
      verdicts.push(verdict);
    }
  }
  const resolved =
    lists.f2p.length + lists.p2p.length > 0 &&
    counts.f2p.passed === counts.f2p.total &&
    counts.p2p.passed === counts.p2p.total;
  return { reward: resolved ? 1 : 0, resolved, counts, verdicts };
}
