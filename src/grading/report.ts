/**
 * The result of grading one run against what a task expects, shared by the
 * rule sets in this folder and printed by `berth grade`.
 */
import type { TestVerdict } from './types.ts';

export interface CategoryCount {
  expected: number;
  passed: number;
}

export interface GradeReport {
  /** Rule set: `swebench`, `multi-swe-bench` or `kotlin`. */
  rules: string;
  /** Every expected test landed where it should and the run is valid. */
  resolved: boolean;
  /** 1 when resolved, else 0. */
  reward: number;
  /** The run passed the rule set's validity checks (always true for rules that have none). */
  valid: boolean;
  /** Which validity check failed, naming the test when there is one. */
  invalidReason?: string;
  /** The grade could not be computed (bad expectations, unreadable report): reward 0. */
  error?: string;
  /** One verdict per expected test, in the order of the expected lists. */
  verdicts: TestVerdict[];
  /** Per category: how many tests were expected and how many count as passed. */
  categories: Record<string, CategoryCount>;
  /** Expected ids matched other than exactly (truncated, by prefix; path parameters), with every reported id each stood for. */
  prefixMatches: { expected: string; matched: string[] }[];
  /** Expected ids dropped because they cannot name a test (SWE-bench default rules). */
  droppedExpected?: { id: string; category: string; reason: string }[];
  warnings: string[];
}

/** Counts verdicts per category. */
export function countCategories(
  verdicts: TestVerdict[],
  categories: string[],
): Record<string, CategoryCount> {
  const out: Record<string, CategoryCount> = {};
  for (const c of categories) out[c] = { expected: 0, passed: 0 };
  for (const v of verdicts) {
    const entry = out[v.category] ?? { expected: 0, passed: 0 };
    out[v.category] = entry;
    entry.expected++;
    if (v.passed) entry.passed++;
  }
  return out;
}
