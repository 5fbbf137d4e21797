import { describe, expect, it } from 'vitest';
import { countStatuses } from '../parsers/common.ts';
import type { ParseResult, TestCase, TestStatus } from '../parsers/types.ts';
import { gradeSwebench, suiteRan } from './swebench.ts';

function parsed(entries: Record<string, TestStatus>, truncated = false): ParseResult {
  const tests: TestCase[] = Object.entries(entries).map(([id, status]) => ({ id, status }));
  return { format: 'pytest', tests, counts: countStatuses(tests), warnings: [], truncated };
}

const ranLog = '============ 3 passed, 1 failed in 0.12s ============';
const grade = (
  entries: Record<string, TestStatus>,
  extra: Partial<Parameters<typeof gradeSwebench>[0]> = {},
) =>
  gradeSwebench({
    failToPass: ['f1', 'f2'],
    passToPass: ['p1', 'p2'],
    parse: parsed(entries),
    log: ranLog,
    exitCode: Object.values(entries).some((s) => s === 'FAILED' || s === 'ERROR') ? 1 : 0,
    timedOut: false,
    ...extra,
  });

describe('SWE-bench grading', () => {
  it('resolves when every FAIL_TO_PASS and PASS_TO_PASS test passes', () => {
    const g = grade({ f1: 'PASSED', f2: 'PASSED', p1: 'PASSED', p2: 'PASSED', other: 'FAILED' });
    expect(g.status).toBe('resolved');
    expect(g.FAIL_TO_PASS).toEqual({ passed: 2, total: 2 });
    expect(g.PASS_TO_PASS).toEqual({ passed: 2, total: 2 });
  });

  it('a missing test fails, with the reason recorded', () => {
    const g = grade({ f1: 'PASSED', p1: 'PASSED', p2: 'PASSED' });
    expect(g.resolved).toBe(false);
    expect(g.status).toBe('unresolved');
    expect(g.verdicts.find((v) => v.id === 'f2')).toMatchObject({ passed: false, reason: 'missing' });
  });

  it('a skipped FAIL_TO_PASS test fails; a skipped PASS_TO_PASS test holds', () => {
    const skippedF2p = grade({ f1: 'PASSED', f2: 'SKIPPED', p1: 'PASSED', p2: 'PASSED' });
    expect(skippedF2p.resolved).toBe(false);
    expect(skippedF2p.verdicts.find((v) => v.id === 'f2')).toMatchObject({
      passed: false,
      reason: 'skipped',
      status: 'SKIPPED',
    });
    const skippedP2p = grade({ f1: 'PASSED', f2: 'PASSED', p1: 'SKIPPED', p2: 'PASSED' });
    expect(skippedP2p.resolved).toBe(true);
    expect(skippedP2p.PASS_TO_PASS).toEqual({ passed: 2, total: 2 });
  });

  it('every test not passed has a reason: failed, error, missing', () => {
    const g = grade({ f1: 'FAILED', f2: 'ERROR', p1: 'PASSED' });
    for (const v of g.verdicts.filter((x) => !x.passed)) expect(v.reason).toBeDefined();
    expect(g.verdicts.map((v) => v.reason)).toEqual(['failed', 'error', undefined, 'missing']);
  });

  it('empty FAIL_TO_PASS / PASS_TO_PASS lists count as fully passed, as SWE-bench computes them', () => {
    const g = gradeSwebench({
      failToPass: ['f1'],
      passToPass: [],
      parse: parsed({ f1: 'PASSED' }),
      log: ranLog,
      exitCode: 0,
      timedOut: false,
    });
    expect(g.status).toBe('resolved');
    expect(g.PASS_TO_PASS).toEqual({ passed: 0, total: 0 });
  });

  it('a run that parses to nothing without a sign of running is an error, never resolved', () => {
    const g = gradeSwebench({
      failToPass: [],
      passToPass: [],
      parse: parsed({}),
      log: 'Traceback: ImportError',
      exitCode: 0,
      timedOut: false,
    });
    expect(g.status).toBe('error');
    expect(g.resolved).toBe(false);
    expect(g.errorReason).toMatch(/no sign/);
    // With evidence that the runner ran, an empty map grades normally: every expected test is missing.
    const ran = gradeSwebench({
      failToPass: ['f1'],
      passToPass: [],
      parse: parsed({}),
      log: 'collected 3 items',
      exitCode: 0,
      timedOut: false,
    });
    expect(ran.status).toBe('unresolved');
  });

  it('a non-zero exit with no FAILED or ERROR test is an error (forged passes)', () => {
    const g = grade({ f1: 'PASSED', f2: 'PASSED', p1: 'PASSED', p2: 'PASSED' }, { exitCode: 1 });
    expect(g.status).toBe('error');
    expect(g.errorReason).toMatch(/exited 1/);
  });

  it('a timed-out run is an error even if everything parsed as passed', () => {
    const g = grade(
      { f1: 'PASSED', f2: 'PASSED', p1: 'PASSED', p2: 'PASSED' },
      { timedOut: true, timeoutSec: 5 },
    );
    expect(g).toMatchObject({
      status: 'error',
      resolved: false,
      errorReason: 'the test run timed out after 5 s',
    });
  });

  it('matches an id cut mid-parameter by prefix: passed only when every match passed', () => {
    const truncatedId = 'tests/test_f.py::test_grammar[log(photon';
    const agree = gradeSwebench({
      failToPass: [truncatedId],
      passToPass: [],
      parse: parsed({
        'tests/test_f.py::test_grammar[log(photon)]': 'PASSED',
        'tests/test_f.py::test_grammar[log(photon m)]': 'PASSED',
      }),
      log: ranLog,
      exitCode: 0,
      timedOut: false,
    });
    expect(agree.resolved).toBe(true);
    expect(agree.verdicts[0]?.matchedBy).toBe('prefix');
    const disagree = gradeSwebench({
      failToPass: [truncatedId],
      passToPass: [],
      parse: parsed({
        'tests/test_f.py::test_grammar[log(photon)]': 'PASSED',
        'tests/test_f.py::test_grammar[log(photon m)]': 'FAILED',
      }),
      log: ranLog,
      exitCode: 1,
      timedOut: false,
    });
    expect(disagree.resolved).toBe(false);
    // The worst non-passing sibling gives the reason, whatever the log order (SWE-bench issue #663).
    expect(disagree.verdicts[0]).toMatchObject({ passed: false, reason: 'failed', matchedBy: 'prefix' });
    // A complete id never prefix-matches.
    const complete = gradeSwebench({
      failToPass: ['t[a]'],
      passToPass: [],
      parse: parsed({ 't[a]x': 'PASSED' }),
      log: ranLog,
      exitCode: 0,
      timedOut: false,
    });
    expect(complete.resolved).toBe(false);
  });

  it('marks missing tests of a truncated log as truncated-log', () => {
    const g = gradeSwebench({
      failToPass: ['f1'],
      passToPass: [],
      parse: parsed({ x: 'PASSED' }, true),
      log: ranLog,
      exitCode: 0,
      timedOut: false,
    });
    expect(g.verdicts[0]?.reason).toBe('truncated-log');
  });

  it('recognises runner evidence only with non-zero counts', () => {
    expect(suiteRan('collected 0 items')).toBe(false);
    expect(suiteRan('collected 12 items')).toBe(true);
    expect(suiteRan('# tests 0')).toBe(false);
    expect(suiteRan('# tests 4')).toBe(true);
    expect(suiteRan('3 passing (20ms)')).toBe(true);
    expect(suiteRan('Ran 5 tests in 0.01s')).toBe(true);
  });
});
