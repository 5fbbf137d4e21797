import { describe, expect, it } from 'vitest';
import { countStatuses } from '../parsers/common.ts';
import type { ParseResult, TestStatus } from '../parsers/types.ts';
import { gradeSwebench } from './swebench.ts';

function parsed(entries: Record<string, TestStatus>, truncated = false): ParseResult {
  const tests = Object.entries(entries).map(([id, status]) => ({ id, status }));
  return { format: 'pytest', tests, counts: countStatuses(tests), warnings: [], truncated };
}
const base = { log: '== 3 passed in 0.1s ==', exitCode: 1, timedOut: false };

describe('SWE-bench grading through match.ts', () => {
  it('skipped F2P fails, skipped P2P holds, missing fails (SWE-bench #598, #139)', () => {
    const g = gradeSwebench({
      ...base,
      failToPass: ['t::f', 't::g'],
      passToPass: ['t::p', 't::q'],
      parse: parsed({ 't::f': 'PASSED', 't::g': 'SKIPPED', 't::p': 'SKIPPED', 'other::x': 'FAILED' }),
    });
    const byId = Object.fromEntries(g.verdicts.map((v) => [v.id, v]));
    expect(byId['t::g']).toMatchObject({ passed: false, reason: 'skipped' });
    expect(byId['t::p']).toMatchObject({ passed: true });
    expect(byId['t::q']).toMatchObject({ passed: false, reason: 'missing' });
    expect(g.status).toBe('unresolved');
  });

  it('a truncated Verified id matches by prefix; a SKIPPED and a FAILED sibling fail P2P in any order (#663)', () => {
    const both = (order: [string, TestStatus][]) =>
      gradeSwebench({
        ...base,
        failToPass: ['astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon'],
        passToPass: ['tests/test_a.py::test_x[a'],
        parse: parsed({
          'astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon / m**2 s)]': 'PASSED',
          ...Object.fromEntries(order),
        }),
      });
    for (const g of [
      both([
        ['tests/test_a.py::test_x[a b]', 'SKIPPED'],
        ['tests/test_a.py::test_x[a c]', 'FAILED'],
      ]),
      both([
        ['tests/test_a.py::test_x[a c]', 'FAILED'],
        ['tests/test_a.py::test_x[a b]', 'SKIPPED'],
      ]),
    ]) {
      expect(g.verdicts[0]).toMatchObject({ passed: true, matchedBy: 'prefix' });
      expect(g.verdicts[1]).toMatchObject({ passed: false, reason: 'failed', matchedBy: 'prefix' });
      expect(g.resolved).toBe(false);
    }
  });

  it('resolves when all pass; a truncated log makes missing tests say so', () => {
    const ok = gradeSwebench({
      ...base,
      failToPass: ['a'],
      passToPass: ['b'],
      parse: parsed({ a: 'PASSED', b: 'PASSED', c: 'FAILED' }),
    });
    expect(ok).toMatchObject({ status: 'resolved', resolved: true });
    const cut = gradeSwebench({
      ...base,
      failToPass: ['a', 'z'],
      passToPass: [],
      parse: parsed({ a: 'PASSED', c: 'FAILED' }, true),
    });
    expect(cut.verdicts[1]).toMatchObject({ passed: false, reason: 'truncated-log' });
  });
});
