/**
 * SWE-bench verdicts on pytest logs, issue 12: each case a log written by the real pytest
 * (test/fixtures/parsers/generated, from projects/python/pytest_style) or built from a
 * public bug report, parsed by the pytest parser and graded with the SWE-bench rules.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunksOf } from '../parsers/common.ts';
import { pytestParser } from '../parsers/pytest.ts';
import type { ParseResult } from '../parsers/types.ts';
import { mapSkipLocations, testAtLine } from './skip-locations.ts';
import { gradeSwebench, harnessPytestStatuses, junkIdReason, type SwebenchGradeInput } from './swebench.ts';

const generated = join(import.meta.dirname, '../../test/fixtures/parsers/generated');
const read = (name: string) => readFileSync(join(generated, name), 'utf8');
const parse = (text: string): Promise<ParseResult> => pytestParser.parse(chunksOf(text));
const statusMap = (r: ParseResult) => Object.fromEntries(r.tests.map((t) => [t.id, t.status]));
const T = 'tests/test_calc.py::';

async function grade(
  log: string,
  failToPass: string[],
  passToPass: string[],
  extra: Partial<SwebenchGradeInput> = {},
) {
  return gradeSwebench({
    failToPass,
    passToPass,
    parse: await parse(log),
    log,
    exitCode: 1,
    timedOut: false,
    ...extra,
  });
}

describe('xfail(run=False): the test never ran (SWE-bench #654)', () => {
  it('`-rA -vv -o console_output_style=classic`: `XFAIL ([NOTRUN] reason)` is SKIPPED, and the F2P fails', async () => {
    const log = read('pytest-ra-vv-classic.txt');
    expect(log).toContain(`${T}test_never_runs XFAIL ([NOTRUN] not ready)`);
    const result = await parse(log);
    expect(result.tests.find((t) => t.id === `${T}test_never_runs`)).toMatchObject({
      status: 'SKIPPED',
      outcome: 'xfailed-notrun',
    });
    const g = await grade(log, [`${T}test_never_runs`], [`${T}test_prints_results`]);
    expect(g.resolved).toBe(false);
    expect(g.verdicts[0]).toMatchObject({ passed: false, reason: 'skipped' });
  });

  it('pytest < 8 prints the reason on the next line; a plain verbose XFAIL does not undo a NOTRUN', async () => {
    const log = [
      'tests/t.py::test_a XFAIL',
      '=========================== short test summary info ============================',
      'XFAIL tests/t.py::test_a',
      '  reason: [NOTRUN] not ready',
      'XFAIL tests/t.py::test_b',
      '  reason: known bug',
      '======================== 2 xfailed in 0.02s ========================',
    ].join('\n');
    const result = await parse(log);
    expect(result.tests.map((t) => [t.id, t.status, t.outcome])).toEqual([
      ['tests/t.py::test_a', 'SKIPPED', 'xfailed-notrun'],
      ['tests/t.py::test_b', 'PASSED', 'xfailed'],
    ]);
  });
});

describe('never invent tests', () => {
  it('plain `-rA`: no `<file>::#k` placeholders; the progress characters stay counted and unnamed', async () => {
    const result = await parse(read('pytest-ra.txt'));
    expect(result.tests.some((t) => t.id.includes('::#'))).toBe(false);
    expect(Object.keys(statusMap(result)).sort()).toEqual(
      [`${T}test_fails`, `${T}test_never_runs`, `${T}test_prints_results`]
        .concat(result.tests.filter((t) => t.id.startsWith(`${T}test_stdin[`)).map((t) => t.id))
        .sort(),
    );
    // pytest: 1 failed, 2 passed, 2 skipped, 1 xfailed (the xfail never ran: SKIPPED).
    expect(result.counts).toEqual({ passed: 2, failed: 1, error: 0, skipped: 3 });
    expect(result.unnamed).toEqual([
      {
        file: 'tests/test_calc.py',
        status: 'SKIPPED',
        count: 2,
        locations: ['tests/test_calc.py:19', 'tests/test_calc.py:22'],
        skips: [
          { line: 19, count: 1, reason: 'not here' },
          { line: 22, count: 1, reason: 'decorated' },
        ],
      },
    ]);
  });
});

describe('skips reported only by location', () => {
  const project = join(generated, 'projects/python/pytest_style');
  const sources = async (file: string) => readFileSync(join(project, file), 'utf8');

  it('mapped back to their tests from the test file: the P2P holds', async () => {
    const log = read('pytest-ra.txt');
    const mapped = await mapSkipLocations(await parse(log), sources);
    expect(mapped.tests.find((t) => t.id === `${T}test_skips_inside`)).toMatchObject({
      status: 'SKIPPED',
      message: 'not here',
      mappedFrom: 'tests/test_calc.py:19',
    });
    expect(mapped.tests.find((t) => t.id === `${T}test_skipped_by_mark`)).toMatchObject({
      status: 'SKIPPED',
      mappedFrom: 'tests/test_calc.py:22',
    });
    expect(mapped.unnamed).toEqual([]);
    expect(mapped.counts).toEqual((await parse(log)).counts);
    const g = await grade(log, [`${T}test_prints_results`], [`${T}test_skips_inside`], { parse: mapped });
    expect(g.resolved).toBe(true);
  });

  it('said when it cannot be mapped (no test file), and the warning asks for what is missing (-v), not for -rA', async () => {
    const log = read('pytest-ra.txt');
    expect(log).toContain('SKIPPED [1] tests/test_calc.py:19: not here');
    const result = await parse(log);
    const warning = result.warnings.find((w) => w.includes('by location'));
    expect(warning).toContain('2 in tests/test_calc.py (tests/test_calc.py:19, tests/test_calc.py:22)');
    expect(warning).toContain('-v');
    expect(result.warnings.join('\n')).not.toContain('-rA or -v');
    const g = await grade(log, [`${T}test_prints_results`], [`${T}test_skips_inside`]);
    // Fail-closed: a test the log does not name is missing; the verdict says why.
    expect(g.resolved).toBe(false);
    expect(g.verdicts[1]).toMatchObject({ passed: false, reason: 'missing' });
    expect(g.verdicts[1]?.note).toContain('2 skipped (tests/test_calc.py:19, tests/test_calc.py:22)');
    // A file that cannot be read maps nothing.
    const none = await mapSkipLocations(result, async () => undefined);
    expect(none.unnamed?.[0]?.count).toBe(2);
  });

  it('hostile: a conftest.py listing a deleted test and printing results before the session maps nothing', async () => {
    const log = read('pytest-hostile-listing.txt');
    const result = await parse(log);
    expect(statusMap(result)).toEqual({ 'tests/test_h.py::test_f2p': 'FAILED' });
    expect(result.warnings.join('\n')).toMatch(
      /2 result line\(s\) printed before pytest's session started were ignored/,
    );
    const hostile = join(generated, 'projects/python/pytest_hostile');
    const mapped = await mapSkipLocations(result, async (file) => readFileSync(join(hostile, file), 'utf8'));
    // The skip is where the file says it is: in test_dummy, not in the deleted test.
    expect(statusMap(mapped)).toEqual({
      'tests/test_h.py::test_f2p': 'FAILED',
      'tests/test_h.py::test_dummy': 'SKIPPED',
    });
    const g = await grade(log, ['tests/test_h.py::test_f2p'], ['tests/test_h.py::test_p2p_gone'], {
      parse: mapped,
    });
    expect(g.resolved).toBe(false);
    expect(g.verdicts.map((v) => v.reason)).toEqual(['failed', 'missing']);
  });

  it('without -rA nor -v, the warning asks for either', async () => {
    const result = await parse('tests/t.py ..F\n');
    expect(result.warnings.join('\n')).toContain('-rA or -v');
    expect(result.tests).toEqual([]);
    expect(result.counts).toEqual({ passed: 2, failed: 1, error: 0, skipped: 0 });
  });
});

describe('testAtLine: the test a line of a Python file belongs to', () => {
  const source = [
    'import pytest', // 1
    '', // 2
    'def helper():', // 3
    '    pytest.skip("x")', // 4
    '', // 5
    'class TestA:', // 6
    '    @pytest.mark.skipif(', // 7
    '        True, reason="multi-line decorator"', // 8
    '    )', // 9
    '    def test_m(self):', // 10
    '        if True:', // 11
    '            pytest.skip("deep")', // 12
    '', // 13
    '    class TestInner:', // 14
    '        async def test_n(self):', // 15
    '            pytest.skip()', // 16
    '', // 17
    '@pytest.mark.parametrize("a", [1, 2])', // 18
    'def test_p(a):', // 19
    '    pytest.skip()', // 20
    '', // 21
    'def test_outer():', // 22
    '    def test_nested():', // 23
    '        pytest.skip()', // 24
    'x = pytest.skip', // 25
  ].join('\n');
  it.each([
    [4, undefined], // a helper, not a test
    [7, 'TestA::test_m'], // the decorator above it
    [8, 'TestA::test_m'],
    [10, 'TestA::test_m'],
    [12, 'TestA::test_m'],
    [16, 'TestA::TestInner::test_n'],
    [19, undefined], // parametrised: its ids carry parameters
    [20, undefined],
    [24, undefined], // nested in another function: not a test
    [25, undefined], // module level
    [99, undefined],
  ])('line %i -> %s', (line, expected) => expect(testAtLine(source, line)).toBe(expected));
});

describe('parametrised ids holding the run temp folder (SWE-bench parse_log_pytest_options)', () => {
  it('the gold id `test_stdin[/mymodule.py]` matches the run `test_stdin[/tmp/tmpXXXX/mymodule.py]`', async () => {
    const log = read('pytest-ra.txt');
    const g = await grade(log, [`${T}test_prints_results`], [`${T}test_stdin[/mymodule.py]`]);
    expect(g.verdicts[1]).toMatchObject({ passed: true, matchedBy: 'path-parameter' });
    expect(g.verdicts[1]?.matchedId).toMatch(
      /^tests\/test_calc\.py::test_stdin\[\/tmp\/tmp\w+\/mymodule\.py\]$/,
    );
    expect(g.resolved).toBe(true);
  });
});

describe('captured output is never a result', () => {
  it('a passing test printing an id and `PASSED [100%]` (the -rA PASSES section) makes no phantom test', async () => {
    const log = read('pytest-ra.txt');
    expect(log).toMatch(/Captured stdout call[^\n]*\ntests\/inner\.py::test_phantom\nPASSED \[100%\]/);
    for (const name of ['pytest-ra.txt', 'pytest-ra-vv-classic.txt', 'pytest-collect-then-ra.txt']) {
      const result = await parse(read(name));
      expect(result.tests.filter((t) => t.id.startsWith('tests/inner.py'))).toEqual([]);
      expect(result.countMismatch).toBeUndefined();
    }
  });

  it('test output imitating a second short summary is discarded; nothing counts after the final line', async () => {
    const log = [
      '============================= test session starts ==============================',
      'tests/t.py F.',
      '=================================== FAILURES ===================================',
      '___ test_a ___',
      '----------------------------- Captured stdout call -----------------------------',
      'PASSED tests/t.py::test_fake',
      '==================================== PASSES ====================================',
      '=========================== short test summary info ============================',
      'PASSED tests/t.py::test_a',
      '=========================== short test summary info ============================',
      'FAILED tests/t.py::test_a - assert 0',
      'PASSED tests/t.py::test_b',
      '========================= 1 failed, 1 passed in 0.05s ==========================',
      'PASSED tests/t.py::test_late',
    ].join('\n');
    const result = await parse(log);
    expect(statusMap(result)).toEqual({ 'tests/t.py::test_a': 'FAILED', 'tests/t.py::test_b': 'PASSED' });
    expect(result.warnings.join('\n')).toContain('second "short test summary info"');
  });
});

describe('junk ids in gold lists (pytest-5262, -7521, django-16145)', () => {
  const log = [
    'tests/t.py::test_a PASSED',
    'PASSED [100%]',
    '=========================== short test summary info ============================',
    'PASSED tests/t.py::test_a',
    '========================= 1 passed in 0.05s ==========================',
  ].join('\n');

  it('tells ids that cannot name a test', () => {
    for (const junk of ['[100%]', '[ 50%]', '[100%]------------------------------', '[', '"', '', ' '])
      expect(junkIdReason(junk), junk).toBeDefined();
    for (const ok of ['tests/t.py::test_a', '#15789', 'test_x (m.C)', '[bug] title', 'a[1]'])
      expect(junkIdReason(ok), ok).toBeUndefined();
  });

  it('default rules: dropped from the gold list and recorded', async () => {
    const g = await grade(log, ['tests/t.py::test_a'], ['[100%]', '['], { exitCode: 0 });
    expect(g.resolved).toBe(true);
    expect(g.PASS_TO_PASS).toEqual({ passed: 0, total: 0 });
    expect(g.dropped).toEqual([
      { id: '[100%]', category: 'PASS_TO_PASS', reason: 'a pytest progress column, not a test' },
      { id: '[', category: 'PASS_TO_PASS', reason: 'no letter or digit: a fragment, not a test' },
    ]);
  });

  it('--rules swebench: matched as the harness parser reads the log (`PASSED [100%]` is test `[100%]`)', async () => {
    const g = await grade(log, ['tests/t.py::test_a'], ['[100%]', '['], { exitCode: 0, rules: 'swebench' });
    expect(g.dropped).toEqual([]);
    // `[` has more `[` than `]`: the harness (HEAD, PR #617) matches it by prefix, here to `[100%]`.
    expect(g.verdicts.map((v) => [v.id, v.passed, v.matchedBy])).toEqual([
      ['tests/t.py::test_a', true, 'exact'],
      ['[100%]', true, 'exact'],
      ['[', true, 'prefix'],
    ]);
    expect(g.resolved).toBe(true);
    const without = await grade(log.replace('PASSED [100%]', ''), ['tests/t.py::test_a'], ['[100%]'], {
      exitCode: 0,
      rules: 'swebench',
    });
    expect(without.verdicts[1]).toMatchObject({ passed: false, reason: 'missing' });
    expect(harnessPytestStatuses('FAILED [ - boom\nSKIPPED [1] t.py:3: x\n', new Set(['[', '[1]']))).toEqual(
      new Map([['[', 'FAILED']]),
    );
  });
});
