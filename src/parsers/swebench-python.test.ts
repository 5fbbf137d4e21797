/**
 * The Django/unittest and sympy parsers on output of the real runners
 * (test/fixtures/parsers/generated: unittest-verbose.txt, sympy-bin-test.txt, see its README),
 * and on the output shapes SWE-bench's issues report for Django (#165, #167), with the ids the
 * shared SWE-bench Lite rows use.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeSwebench } from '../grading/swebench.ts';
import { chunksOf } from './common.ts';
import { detectParser, getParser, parseReport } from './registry.ts';
import type { ParseResult } from './types.ts';

const generated = join(import.meta.dirname, '../../test/fixtures/parsers/generated');
const statusMap = (r: ParseResult) => Object.fromEntries(r.tests.map((t) => [t.id, t.status]));
const parseText = (format: string, text: string) => getParser(format).parse(chunksOf(text));

describe('django (unittest verbose) parser', () => {
  it('reads every outcome of a real unittest -v run', async () => {
    const result = await parseReport({ path: join(generated, 'unittest-verbose.txt') }, { format: 'django' });
    expect(statusMap(result)).toEqual({
      'test_adds (__main__.CalcTests.test_adds)': 'PASSED',
      'Adding zero changes nothing.': 'PASSED',
      'test_errors (__main__.CalcTests.test_errors)': 'ERROR',
      'test_expected_failure (__main__.CalcTests.test_expected_failure)': 'PASSED',
      'test_fails (__main__.CalcTests.test_fails)': 'FAILED',
      'test_prints_output (__main__.CalcTests.test_prints_output)': 'PASSED',
      'test_skipped (__main__.CalcTests.test_skipped)': 'SKIPPED',
      'test_unexpected_success (__main__.CalcTests.test_unexpected_success)': 'FAILED',
    });
    expect(result.truncated).toBe(false);
    expect(result.tests.find((t) => t.status === 'SKIPPED')?.message).toBe("'needs a database'");
  });

  it('is detected on Django runner output', async () => {
    const text = [
      "Testing against Django installed in '/testbed/django' with up to 1 processes",
      'test_callable_sitemod_no_items (sitemaps_tests.test_http.HTTPSitemapTests) ... ok',
      'Ran 1 test in 0.01s',
      '',
    ].join('\n');
    expect(detectParser(text)?.name).toBe('django');
  });

  it('settles tests whose output came between "..." and the outcome (SWE-bench #167, #165)', async () => {
    const log = [
      'test_annotation_with_nested_outerref (expressions.tests.BasicExpressionsTests) ... System check identified no issues (0 silenced).',
      'ok',
      'test_sqlmigrate_backwards (migrations.test_commands.MigrateTests.test_sqlmigrate_backwards)',
      'sqlmigrate outputs reverse looking SQL. ... ok',
      'test_view (view_tests.tests.T) ... Internal Server Error: /raises/',
      'Traceback (most recent call last):',
      'FAIL',
      'Ran 3 tests in 0.2s',
      '',
    ].join('\n');
    expect(statusMap(await parseText('django', log))).toEqual({
      'test_annotation_with_nested_outerref (expressions.tests.BasicExpressionsTests)': 'PASSED',
      'sqlmigrate outputs reverse looking SQL.': 'PASSED',
      'test_view (view_tests.tests.T)': 'FAILED',
    });
  });

  it('grades a Lite row: django__django-15781 F2P id is a docstring line', async () => {
    const log = [
      'test_create_parser_kwargs (user_commands.tests.CommandTests.test_create_parser_kwargs)',
      'BaseCommand.create_parser() passes kwargs to CommandParser. ... ok',
      'test_command (user_commands.tests.CommandTests.test_command)',
      'An unknown command raises CommandError ... FAIL',
      '======================================================================',
      'FAIL: test_command (user_commands.tests.CommandTests.test_command)',
      'An unknown command raises CommandError',
      'Ran 2 tests in 0.1s',
      '',
    ].join('\n');
    const grade = gradeSwebench({
      parse: await parseText('django', log),
      log,
      exitCode: 1,
      timedOut: false,
      failToPass: ['BaseCommand.create_parser() passes kwargs to CommandParser.'],
      passToPass: ['An unknown command raises CommandError'],
    });
    expect(grade.FAIL_TO_PASS).toEqual({ passed: 1, total: 1 });
    expect(grade.PASS_TO_PASS).toEqual({ passed: 0, total: 1 });
    expect(grade.resolved).toBe(false);
  });

  it('marks a log without "Ran N tests" as cut short', async () => {
    const result = await parseText('django', 'test_a (m.T) ... ok\n');
    expect(result.truncated).toBe(true);
  });

  it('output glued to the outcome (a real unittest run: `... partial output no newlineok`) is parsed', async () => {
    const result = await parseReport({ path: join(generated, 'unittest-glued.txt') }, { format: 'django' });
    const t = (name: string) => `${name} (__main__.GluedTests.${name})`;
    expect(statusMap(result)).toEqual({
      [t('test_fails_after_output')]: 'FAILED',
      [t('test_plain')]: 'PASSED',
      [t('test_prints_no_newline')]: 'PASSED',
    });
    expect(result.warnings).toEqual([]);
    expect(result.countMismatch).toBeUndefined();
  });

  it('a glued outcome gives way to an outcome line of its own; a test with none is named in a warning', async () => {
    const log = [
      'test_a (m.T.test_a) ... look', // the test printed "look" and a newline: not an outcome yet
      'FAIL',
      'test_b (m.T.test_b) ... printed',
      'test_c (m.T.test_c) ... outputok',
      'Ran 3 tests in 0.1s',
      '',
    ].join('\n');
    const result = await parseText('django', log);
    expect(statusMap(result)).toEqual({ 'test_a (m.T.test_a)': 'FAILED', 'test_c (m.T.test_c)': 'PASSED' });
    expect(result.warnings).toContain('no outcome for 1 test(s): "test_b (m.T.test_b)" (line 3)');
    // Ran 3, but only two tests had an outcome: recorded, and said.
    expect(result.countMismatch).toEqual({ reported: 3, parsed: 2, summary: 'Ran 3 tests in 0.1s' });
  });

  it('checks `Ran N tests` against the tests parsed', async () => {
    const result = await parseText('django', 'test_a (m.T) ... ok\n\nRan 4 tests in 0.2s\n\nOK\n');
    expect(result.countMismatch).toEqual({ reported: 4, parsed: 1, summary: 'Ran 4 tests in 0.2s' });
    expect(result.warnings.join('\n')).toContain('"Ran 4 tests in 0.2s" (4) but 1 test(s)');
    const real = await parseReport({ path: join(generated, 'unittest-verbose.txt') }, { format: 'django' });
    expect(real.countMismatch).toBeUndefined();
  });
});

describe('sympy (bin/test --verbose) parser', () => {
  it('reads every mark of a real sympy runner log, with file and the failure headers', async () => {
    const result = await parseReport({ path: join(generated, 'sympy-bin-test.txt') }, { format: 'sympy' });
    expect(statusMap(result)).toEqual({
      test_errors: 'ERROR',
      test_unexpected_pass: 'PASSED',
      test_prints_output: 'PASSED',
      test_expected_failure: 'PASSED',
      test_slow_one: 'SKIPPED',
      test_adds: 'PASSED',
      test_skipped: 'SKIPPED',
      test_fails: 'FAILED',
      'demo/tests/test_calc.py:test_errors': 'FAILED',
      'demo/tests/test_calc.py::test_fails': 'FAILED',
    });
    expect(result.tests.find((t) => t.id === 'test_adds')?.file).toBe('demo/tests/test_calc.py');
    expect(result.tests.find((t) => t.id === 'test_expected_failure')?.outcome).toBe('xfailed');
    expect(result.truncated).toBe(false);
  });

  it('is detected, and grades a Lite row (sympy__sympy-13031)', async () => {
    const log = [
      '============================= test process starts ==============================',
      'executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.19-final-0) [CPython]',
      '',
      'sympy/matrices/tests/test_sparse.py[11] ',
      'test_sparse_matrix F',
      'test_transpose ok',
      'test_trace ok                                                        [FAIL]',
      '',
      '________________________________________________________________________________',
      '_________ sympy/matrices/tests/test_sparse.py:test_sparse_matrix __________',
      'AssertionError',
      '============ tests finished: 2 passed, 1 failed, in 0.51 seconds =============',
      '',
    ].join('\n');
    expect(detectParser(log)?.name).toBe('sympy');
    const grade = gradeSwebench({
      parse: await parseText('sympy', log),
      log,
      exitCode: 1,
      timedOut: false,
      failToPass: ['test_sparse_matrix'],
      passToPass: ['test_transpose', 'test_trace'],
    });
    expect(grade.FAIL_TO_PASS).toEqual({ passed: 0, total: 1 });
    expect(grade.PASS_TO_PASS).toEqual({ passed: 2, total: 2 });
  });
});
