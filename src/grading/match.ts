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
 * 4. A reported id whose parameter is an absolute path, shortened to its last
 *    segment as SWE-bench's `parse_log_pytest_options` does
 *    (`test_stdin[/tmp/tmpab12/mymodule.py]` stands for the expected
 *    `test_stdin[/mymodule.py]`; the temp folder differs every run). Several
 *    reported ids with one short form combine as prefix matches do.
 * Every prefix match is reported (`matchedBy: 'prefix'`, `matchedId`, every
 * candidate in `matchedIds`, and the grader's `prefixMatches`).
 */
import { shortenPathParameter } from '../parsers/pytest.ts';
import type { TestCase, TestStatus } from '../parsers/types.ts';
import type { MatchedBy, NotPassedReason, TestVerdict } from './types.ts';

export type PrefixMode = 'truncated' | 'always' | 'never';

export interface MatchOptions {
  /** When to try prefix matching (default `truncated`). */
  prefix?: PrefixMode;
}

export interface Match {
  status?: TestStatus;
  matchedBy?: MatchedBy;
  /** The reported id (for a prefix match, the first candidate in sorted order). */
  matchedId?: string;
  /** Every reported id that matched (prefix and path-parameter matches only). */
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
  private shortened: Map<string, string[]> | undefined;

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
    if (mode !== 'never' && expected !== '' && (mode === 'always' || looksTruncated(expected))) {
      const candidates = this.withPrefix(expected);
      if (candidates.length > 0) return this.combined(candidates, 'prefix');
    }
    if (expected.includes('[/')) {
      const candidates = this.withShortPath(expected);
      if (candidates.length > 0) return this.combined(candidates, 'path-parameter');
    }
    return {};
  }

  /** Several reported ids for one expected: PASSED when all passed, else the worst non-passing status. */
  private combined(candidates: string[], matchedBy: MatchedBy): Match {
    let status: TestStatus = 'PASSED';
    for (const id of candidates) {
      const s = this.byId.get(id) as TestStatus;
      if (NON_PASS_ORDER[s] > NON_PASS_ORDER[status]) status = s;
    }
    return { status, matchedBy, matchedId: candidates[0], candidates };
  }

  private withShortPath(expected: string): string[] {
    if (this.shortened === undefined) {
      this.shortened = new Map();
      for (const id of this.byId.keys()) {
        if (!id.includes('[/')) continue;
        const short = shortenPathParameter(id);
        if (short === id) continue;
        const list = this.shortened.get(short) ?? [];
        list.push(id);
        this.shortened.set(short, list);
      }
    }
    return (this.shortened.get(expected) ?? []).slice().sort();
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
  if (match.matchedBy !== undefined && match.matchedBy !== 'exact' && match.matchedId !== undefined) {
    out.matchedId = match.matchedId;
    if ((match.candidates?.length ?? 0) > 1) out.matchedIds = match.candidates;
  }
  return out;
}

/**
 * Matches other than exact used, for reports: expected id -> every reported id
 * it stood for (all of them, not only the one that decided).
 */
export function prefixMatchesOf(verdicts: TestVerdict[], index: StatusIndex, options: MatchOptions = {}) {
  return verdicts
    .filter((v) => v.matchedBy === 'prefix' || v.matchedBy === 'path-parameter')
    .map((v) => ({ expected: v.id, matched: index.lookup(v.id, options).candidates ?? [] }));
}
