import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import type { TestStatus } from '../parsers/types.ts';
import { gradeTransitions, type MsbExpected, parseMsbExpected } from './multi-swe-bench.ts';

// A Multi-SWE-bench row in its dataset shape: the category lists are objects keyed by test name.
const row = {
  run_result: { passed_tests: ['A', 'B', 'S'], failed_tests: [], skipped_tests: [] },
  test_patch_result: { passed_tests: ['A', 'B'], failed_tests: ['F'], skipped_tests: ['S'] },
  p2p_tests: { A: { run: 'PASS', test: 'PASS', fix: 'PASS' }, B: { run: 'PASS', test: 'PASS', fix: 'PASS' } },
  f2p_tests: { F: { run: 'NONE', test: 'FAIL', fix: 'PASS' } },
  s2p_tests: {},
  n2p_tests: { N: { run: 'NONE', test: 'NONE', fix: 'PASS' } },
};
const expected: MsbExpected = parseMsbExpected(row, 'row.json');
const fix = (entries: Record<string, TestStatus>) => new Map(Object.entries(entries));

describe('Multi-SWE-bench grading', () => {
  it('reads category objects as lists of names', () => {
    expect(expected.p2p_tests).toEqual(['A', 'B']);
    expect(expected.f2p_tests).toEqual(['F']);
  });

  it('resolves when every expected test lands in its category', () => {
    const r = gradeTransitions(
      expected,
      fix({ A: 'PASSED', B: 'PASSED', F: 'PASSED', N: 'PASSED', S: 'SKIPPED' }),
    );
    expect(r).toMatchObject({ resolved: true, reward: 1, valid: true });
    expect(r.categories).toEqual({
      f2p: { expected: 1, passed: 1 },
      p2p: { expected: 2, passed: 2 },
      s2p: { expected: 0, passed: 0 },
      n2p: { expected: 1, passed: 1 },
    });
  });

  it('check 1: no results in the fix run', () => {
    const r = gradeTransitions(expected, fix({}));
    expect(r).toMatchObject({ resolved: false, valid: false });
    expect(r.invalidReason).toMatch(/no test results/);
    expect(r.verdicts.every((v) => v.reason === 'missing')).toBe(true);
  });

  it('check 2: a test passing with the test patch fails with the fix (even one not listed)', () => {
    const r = gradeTransitions(expected, fix({ A: 'PASSED', B: 'ERROR', F: 'PASSED', N: 'PASSED' }));
    expect(r.valid).toBe(false);
    expect(r.invalidReason).toContain('`B`');
    expect(r.verdicts.find((v) => v.id === 'B')).toMatchObject({ passed: false, reason: 'error' });
  });

  it('check 3: nothing fixed', () => {
    const r = gradeTransitions(expected, fix({ A: 'PASSED', B: 'PASSED', F: 'FAILED' }));
    expect(r.invalidReason).toMatch(/no failing, skipped or new test pass/);
    expect(r.verdicts.find((v) => v.id === 'F')).toMatchObject({ reason: 'failed' });
    expect(r.verdicts.find((v) => v.id === 'N')).toMatchObject({ reason: 'missing' });
  });

  it('check 4: anomaly (passed with no patch, skipped with the test patch, fails with the fix)', () => {
    const r = gradeTransitions(
      expected,
      fix({ A: 'PASSED', B: 'PASSED', F: 'PASSED', N: 'PASSED', S: 'FAILED' }),
    );
    expect(r.invalidReason).toMatch(/anomalous pattern: `S`/);
    expect(r.resolved).toBe(false);
  });

  it('valid but an expected test missing: unresolved, the test says missing', () => {
    const r = gradeTransitions(expected, fix({ A: 'PASSED', F: 'PASSED', N: 'PASSED' }));
    expect(r).toMatchObject({ valid: true, resolved: false, reward: 0 });
    expect(r.verdicts.filter((v) => !v.passed)).toEqual([
      { id: 'B', category: 'p2p', passed: false, reason: 'missing' },
    ]);
  });

  it('a passing test in the wrong category does not count', () => {
    const odd = parseMsbExpected({ ...row, f2p_tests: ['A'] }, 'odd.json');
    const r = gradeTransitions(odd, fix({ A: 'PASSED', B: 'PASSED', F: 'PASSED', N: 'PASSED' }));
    expect(r.verdicts.find((v) => v.category === 'f2p')).toMatchObject({
      id: 'A',
      passed: false,
      reason: 'wrong-category',
    });
  });

  it('a test listed in two run sets is an error, not a verdict', () => {
    const bad = parseMsbExpected(
      { ...row, test_patch_result: { passed_tests: ['A'], failed_tests: ['A'], skipped_tests: [] } },
      'bad.json',
    );
    const r = gradeTransitions(bad, fix({ A: 'PASSED' }));
    expect(r.error).toMatch(/both PASS and FAIL/);
    expect(r.reward).toBe(0);
  });

  it('empty expectations give reward 0', () => {
    const empty = parseMsbExpected({ test_patch_result: {} }, 'empty.json');
    expect(gradeTransitions(empty, fix({ A: 'PASSED' }))).toMatchObject({
      reward: 0,
      error: expect.stringMatching(/no test/),
    });
  });

  it('bad expectations are an InputError naming the file and field', () => {
    expect(() => parseMsbExpected({ f2p_tests: 3 }, 'x.json')).toThrow(InputError);
    expect(() => parseMsbExpected({ f2p_tests: [] }, 'x.json')).toThrow(/x\.json: test_patch_result/);
  });
});
