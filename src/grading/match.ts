/**
 * Finding an expected test id among the parsed results, and the shared shape
 * of a per-test verdict.
 *
 * Matching rule:
 * 1. Exact id.
 * 2. Prefix, for ids that datasets truncated. SWE-bench's log parser cut ids
 *    at the first space, so 676 SWE-bench Verified ids end mid-parameter, e.g.
 *    `astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon`
 *    (SWE-bench issue #290, fixed by PR #617). By default (`prefix:
 *    'truncated'`) a prefix match is tried only for an id with more `[` than
 *    `]`, as SWE-bench does; `'always'` tries it for any id that has no exact
 *    match, `'never'` turns it off.
 * 3. When several reported ids share the prefix, the status is the same for
 *    every log order: PASSED when all passed, otherwise the worst of the
 *    non-passing ones (ERROR > FAILED > SKIPPED). SWE-bench's version depends
 *    on log order when a SKIPPED and a FAILED sibling meet (issue #663); this
 *    one does not.
 * Every prefix match is reported (`matchedBy: 'prefix'`, `matchedId`, and the
 * grader's `prefixMatches`).
 */
import type { TestCase, TestStatus } from '../parsers/types.ts';
import type { NotPassedReason, TestVerdict } from './types.ts';

export type PrefixMode = 'truncated' | 'always' | 'never';

export interface MatchOptions {
  /** When to try prefix matching (default `truncated`). */
  prefix?: PrefixMode;
}

export interface Match {
  status?: TestStatus;
  matchedBy?: 'exact' | 'prefix';
  /** The reported id (for a prefix match, the first candidate in sorted order). */
  matchedId?: string;
  /** Every reported id that matched the prefix (prefix matches only). */
  candidates?: string[];
}

/** True when an id looks cut off inside a parameter list (more `[` than `]`). */
export function looksTruncated(id: string): boolean {
  let open = 0;
  let close = 0;
  for (const ch of id) {
    if (ch === '[') open++;
    else if (ch === ']') close++;
  }
  return open > close;
}

const NON_PASS_ORDER: Record<TestStatus, number> = { ERROR: 3, FAILED: 2, SKIPPED: 1, PASSED: 0 };

/** Index of reported statuses by id, with sorted ids for prefix lookups. */
export class StatusIndex {
  private readonly byId: Map<string, TestStatus>;
  private sorted: string[] | undefined;

  constructor(tests: Iterable<Pick<TestCase, 'id' | 'status'>> | Map<string, TestStatus>) {
    if (tests instanceof Map) this.byId = tests;
    else {
      this.byId = new Map();
      for (const test of tests) this.byId.set(test.id, test.status);
    }
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): TestStatus | undefined {
    return this.byId.get(id);
  }

  ids(): IterableIterator<string> {
    return this.byId.keys();
  }

  /** Looks an expected id up: exact, then (per `options.prefix`) by prefix. */
  lookup(expected: string, options: MatchOptions = {}): Match {
    const exact = this.byId.get(expected);
    if (exact !== undefined) return { status: exact, matchedBy: 'exact', matchedId: expected };
    const mode = options.prefix ?? 'truncated';
    if (mode === 'never' || expected === '' || (mode === 'truncated' && !looksTruncated(expected))) return {};
    const candidates = this.withPrefix(expected);
    if (candidates.length === 0) return {};
    let status: TestStatus = 'PASSED';
    for (const id of candidates) {
      const s = this.byId.get(id) as TestStatus;
      if (NON_PASS_ORDER[s] > NON_PASS_ORDER[status]) status = s;
    }
    return { status, matchedBy: 'prefix', matchedId: candidates[0], candidates };
  }

  private withPrefix(prefix: string): string[] {
    if (this.sorted === undefined) this.sorted = [...this.byId.keys()].sort();
    const ids = this.sorted;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ids[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < ids.length && (ids[i] as string).startsWith(prefix); i++) out.push(ids[i] as string);
    return out;
  }
}

/** The reason a found status does not count as passed. */
export function reasonFor(status: TestStatus | undefined, truncatedLog: boolean): NotPassedReason {
  switch (status) {
    case undefined:
      return truncatedLog ? 'truncated-log' : 'missing';
    case 'FAILED':
      return 'failed';
    case 'ERROR':
      return 'error';
    case 'SKIPPED':
      return 'skipped';
    default:
      return 'failed';
  }
}

/**
 * Builds the verdict on one expected test.
 * @param accept which found statuses count as passed for this category.
 */
export function verdict(
  index: StatusIndex,
  id: string,
  category: string,
  accept: (status: TestStatus) => boolean,
  options: MatchOptions & { truncatedLog?: boolean } = {},
): TestVerdict {
  const match = index.lookup(id, options);
  const passed = match.status !== undefined && accept(match.status);
  const out: TestVerdict = { id, category, passed };
  if (match.status !== undefined) out.status = match.status;
  if (!passed) out.reason = reasonFor(match.status, options.truncatedLog === true);
  if (match.matchedBy) out.matchedBy = match.matchedBy;
  if (match.matchedBy === 'prefix' && match.matchedId !== undefined) out.matchedId = match.matchedId;
  return out;
}

/** Prefix matches used, for reports: expected id -> reported ids it stood for. */
export function prefixMatchesOf(verdicts: TestVerdict[], index: StatusIndex, options: MatchOptions = {}) {
  return verdicts
    .filter((v) => v.matchedBy === 'prefix')
    .map((v) => ({ expected: v.id, matched: index.lookup(v.id, options).candidates ?? [] }));
}
