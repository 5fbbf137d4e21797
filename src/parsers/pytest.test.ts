import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunksOf, stripAnsi } from './common.ts';
import { pytestParser, splitIdAndMessage, verboseTail } from './pytest.ts';
import type { ParseResult } from './types.ts';

const fixtures = join(import.meta.dirname, '../../test/fixtures/parsers');
const dataDir = process.env.BERTH_DATA ?? join(import.meta.dirname, '../../../shared/data');
const pytestData = join(dataDir, 'reports/pytest');
let hasData = false;
try {
  hasData = readdirSync(pytestData).length > 0;
} catch {
  hasData = false;
}

function parseText(text: string, keepElements = false): Promise<ParseResult> {
  return pytestParser.parse(chunksOf(text), { keepElements });
}

function statusMap(result: ParseResult): Record<string, string> {
  return Object.fromEntries(result.tests.map((t) => [t.id, t.status]));
}

/** Feeds the text in small pieces, split mid-line and mid-character. */
async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('pytest parser on real logs', () => {
  it('pytest_faillogs.log (-v): every test checked by hand against the log', async () => {
    const result = await parseText(readFileSync(join(fixtures, 'pytest_faillogs.log'), 'utf8'));
    const p = 'tests/test_curlparse.py::TestCurlParse::';
    expect(statusMap(result)).toEqual({
      'tests/test_curldailyinfo.py::TestCurlDailyInfo::test_dailyinfo': 'PASSED',
      [`${p}test_aborted`]: 'PASSED', // XFAIL counts as passed (SWE-bench)
      [`${p}test_daily`]: 'PASSED',
      [`${p}test_event`]: 'PASSED',
      [`${p}test_faillogs`]: 'PASSED',
      [`${p}test_short`]: 'PASSED',
      [`${p}test_testcurlgit`]: 'PASSED',
      [`${p}test_torture`]: 'FAILED',
      [`${p}test_truncated`]: 'PASSED',
      [`${p}test_valgrind`]: 'SKIPPED',
      'tests/test_gitcommitinfo.py::TestGitCommitInfo::test_gitcommitinfo': 'PASSED',
      'tests/test_pytestparse.py::TestCurlParse::test_success': 'PASSED',
      'tests/test_pytestparse.py::TestCurlParse::test_truncated': 'PASSED',
      'tests/test_pytestparse.py::TestCurlParse::test_verbose': 'PASSED',
    });
    expect(result.tests.find((t) => t.id === `${p}test_aborted`)?.outcome).toBe('xfailed');
    // The -v line and the short-summary line of test_torture are one test, not a duplicate.
    expect(result.warnings).toEqual([]);
    expect(result.tests.find((t) => t.id === `${p}test_torture`)?.message).toBe('AssertionError:...');
    expect(result.counts).toEqual({ passed: 12, failed: 1, error: 0, skipped: 1 });
    expect(result.truncated).toBe(false);
  });

  it('pytest_color.log: colour codes inside ids and status words are removed', async () => {
    const result = await parseText(readFileSync(join(fixtures, 'pytest_color.log'), 'utf8'));
    const m = statusMap(result);
    expect(m['tests/unittest_generate.py::TestGenerateLogs::test_failure']).toBe('FAILED');
    expect(m['tests/unittest_generate.py::TestGenerateLogs::test_skipped']).toBe('SKIPPED');
    expect(m['tests/unittest_generate.py::TestFunctionSuccess::runTest']).toBe('PASSED');
    expect(m['tests/unittest_generate.py::TestFunctionFailure::runTest']).toBe('FAILED');
    expect(result.counts).toEqual({ passed: 4, failed: 5, error: 0, skipped: 3 });
    expect(result.tests.every((t) => !t.id.includes('\u001b') && !t.id.includes('[1m'))).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('pytest_verbose.log: a parametrised id with spaces and brackets survives whole', async () => {
    const result = await parseText(readFileSync(join(fixtures, 'pytest_verbose.log'), 'utf8'));
    expect(statusMap(result)).toEqual({
      'bar/test.py::TestParameterized::ciphers[TLSv1.3 +TLSv1.2-True]': 'PASSED',
      'foo_test.py::TestUupcCvt::test_ex': 'FAILED',
      'skip_test.py::TestUupcCvt::test_ex': 'SKIPPED',
    });
  });

  it('pytest_nonverbose.log: classic progress lines keep counts, never invent ids', async () => {
    const result = await parseText(readFileSync(join(fixtures, 'pytest_nonverbose.log'), 'utf8'));
    // pytest's own summary: 1 failed, 12 passed, 1 skipped, 1 xfailed.
    expect(result.counts).toEqual({ passed: 13, failed: 1, error: 0, skipped: 1 });
    // Only the test the log names is a test; the 14 progress characters stay unnamed.
    expect(statusMap(result)).toEqual({ 'tests/test_curlparse.py::TestCurlParse::test_torture': 'FAILED' });
    expect(result.tests.some((t) => t.id.includes('#'))).toBe(false);
    expect(result.unnamed?.reduce((n, u) => n + u.count, 0)).toBe(14);
    expect(result.unnamed).toContainEqual({ file: 'tests/test_curlparse.py', status: 'SKIPPED', count: 1 });
    // The run had -rA's short summary (FAILED line), so only -v is missing.
    expect(result.warnings.some((w) => w.includes('classic progress') && w.includes('with -v to'))).toBe(
      true,
    );
  });

  it('gives the same result whatever the chunking', async () => {
    const text = readFileSync(join(fixtures, 'pytest_color.log'), 'utf8');
    const whole = await parseText(text);
    const split = await pytestParser.parse(pieces(text, 7));
    expect(split.tests).toEqual(whole.tests);
  });
});

describe.skipIf(!hasData)('pytest parser on every log in BERTH_DATA/reports/pytest', () => {
  const files = hasData ? readdirSync(pytestData).filter((f) => f.endsWith('.log')) : [];
  it.each(files)("%s: parsed count equals pytest's own final summary", async (file) => {
    const text = readFileSync(join(pytestData, file), 'utf8');
    const result = await parseText(text);
    const summary = /=+ (.*) in [\d.]+s =+\s*$/.exec(stripAnsi(text));
    expect(summary).not.toBeNull();
    let reported = 0;
    for (const m of (summary?.[1] ?? '').matchAll(/(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)/g)) {
      reported += Number(m[1]);
    }
    // Named tests plus the results printed without an id (classic progress characters).
    expect(result.tests.length + (result.unnamed ?? []).reduce((n, u) => n + u.count, 0)).toBe(reported);
    expect(result.countMismatch).toBeUndefined();
    expect(result.truncated).toBe(false);
  });
});

describe('pytest parser edge cases (SWE-bench parser bugs)', () => {
  it('keeps spaces in ids and cuts the message at the first " - " outside brackets', async () => {
    const result = await parseText(
      [
        'PASSED astropy/units/tests/test_format.py::test_unicode[m⁻¹-unit3 extra]',
        'FAILED tests/test_a.py::test_x[a - b] - AssertionError: expected 1 got 2',
        'ERROR tests/test_b.py - ImportError: no module named x',
      ].join('\n'),
    );
    expect(statusMap(result)).toEqual({
      'astropy/units/tests/test_format.py::test_unicode[m⁻¹-unit3 extra]': 'PASSED',
      'tests/test_a.py::test_x[a - b]': 'FAILED',
      'tests/test_b.py': 'ERROR',
    });
    expect(result.tests[1]?.message).toBe('AssertionError: expected 1 got 2');
  });

  it('ignores skip summaries and bare status lines; a bare status after -s output belongs to the open id', async () => {
    const result = await parseText(
      [
        'tests/test_x.py::test_a PASSED',
        'PASSED',
        'SKIPPED [1] tests/lint/unittest_lint.py:774: Need 2 or more cores',
        'tests/test_x.py::test_b some output printed by the test',
        'tests/test_x.py::test_c ',
        'hello from the test',
        'FAILED [100%]',
      ].join('\n'),
    );
    expect(statusMap(result)).toEqual({
      'tests/test_x.py::test_a': 'PASSED',
      'tests/test_x.py::test_c': 'FAILED',
    });
  });

  it('reads xdist lines with and without progress columns', async () => {
    const result = await parseText(
      [
        '[gw1] [ 20%] PASSED tests/foo.py::test_x',
        '[gw0] PASSED tests/foo.py::test_y',
        '[gw12] [1/5] FAILED tests/foo.py::test_z',
      ].join('\n'),
    );
    expect(statusMap(result)).toEqual({
      'tests/foo.py::test_x': 'PASSED',
      'tests/foo.py::test_y': 'PASSED',
      'tests/foo.py::test_z': 'FAILED',
    });
  });

  it('XFAIL [NOTRUN] is not a pass; XPASS is', async () => {
    const result = await parseText(
      [
        'XFAIL sklearn/utils/tests/test_show_versions.py::test_get_deps_info - [NOTRUN]',
        'XPASS tests/t.py::test_lucky',
      ].join('\n'),
    );
    expect(result.tests.map((t) => [t.status, t.outcome])).toEqual([
      ['SKIPPED', 'xfailed-notrun'],
      ['PASSED', 'xpassed'],
    ]);
  });

  it('a teardown ERROR after PASSED wins; every occurrence is kept on request', async () => {
    const result = await parseText(
      ['tests/t.py::test_a PASSED', 'tests/t.py::test_a ERROR', 'ERROR tests/t.py::test_a - boom'].join('\n'),
      true,
    );
    expect(statusMap(result)).toEqual({ 'tests/t.py::test_a': 'ERROR' });
    expect(result.elements?.map((e) => e.status)).toEqual(['PASSED', 'ERROR', 'ERROR']);
  });

  it('flags a log cut short (session started, no final summary, half-written last line)', async () => {
    const result = await parseText(
      '============================= test session starts ==============================\n' +
        'tests/t.py::test_a PASSED [ 50%]\ntests/t.py::test_b PAS',
    );
    expect(result.truncated).toBe(true);
    expect(statusMap(result)).toEqual({ 'tests/t.py::test_a': 'PASSED' });
  });

  it('a colour-code remnant is only stripped at line start, so params like [1m] survive', async () => {
    const result = await parseText(
      ['tests/t.py::test_d[1m] PASSED', '[32mPASSED[0m tests/t.py::[1mtest_z[0m'].join('\n'),
    );
    expect(statusMap(result)).toEqual({ 'tests/t.py::test_d[1m]': 'PASSED', 'tests/t.py::test_z': 'PASSED' });
  });

  it('splitIdAndMessage', () => {
    expect(splitIdAndMessage('a::b[x - y] - msg - more')).toEqual({
      id: 'a::b[x - y]',
      message: 'msg - more',
    });
    expect(splitIdAndMessage('a::b[log(photon')).toEqual({ id: 'a::b[log(photon' });
  });

  it('detects pytest logs and not TAP', () => {
    expect(pytestParser.detect(readFileSync(join(fixtures, 'pytest_verbose.log'), 'utf8'))).toBeGreaterThan(
      0.9,
    );
    expect(pytestParser.detect('TAP version 13\nok 1 - a\n')).toBe(0);
  });
});

describe('verboseTail', () => {
  it('finds the status word from the end, past a progress column and a reason', () => {
    expect(verboseTail('t.py::a PASSED [ 50%]')).toEqual({ index: 7, word: 'PASSED' });
    expect(verboseTail('t.py::a[x PASSED y] FAILED')).toEqual({ index: 19, word: 'FAILED' });
    expect(verboseTail('t.py::b SKIPPED (needs (a) network)   [100%]')).toEqual({
      index: 7,
      word: 'SKIPPED',
      reason: 'needs (a) network',
    });
    expect(verboseTail('t.py::c XFAIL [3/5]')).toEqual({ index: 7, word: 'XFAIL' });
    expect(verboseTail('t.py::d PASSEDX')).toBeUndefined();
    expect(verboseTail('PASSED')).toBeUndefined();
  });
});

describe('TestCollector.changes', () => {
  it('tells whether a repeat would change the merged result', async () => {
    const { TestCollector } = await import('./common.ts');
    const c = new TestCollector('x');
    expect(c.changes('a', 'PASSED')).toBe(true);
    c.merge({ id: 'a', status: 'PASSED' });
    expect(c.changes('a', 'PASSED')).toBe(false);
    expect(c.changes('a', 'SKIPPED')).toBe(false);
    expect(c.changes('a', 'FAILED')).toBe(true);
    expect(c.changes('a', 'PASSED', true)).toBe(true);
    const kept = new TestCollector('x', { keepElements: true });
    kept.merge({ id: 'a', status: 'PASSED' });
    expect(kept.changes('a', 'PASSED')).toBe(true);
  });
});
