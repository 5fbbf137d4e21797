import { describe, expect, it } from 'vitest';
import type { TestStatus } from '../parsers/types.ts';
import { looksTruncated, StatusIndex, verdict } from './match.ts';

const index = (entries: [string, TestStatus][]) =>
  new StatusIndex(entries.map(([id, status]) => ({ id, status })));
const passes = (s: TestStatus) => s === 'PASSED';

describe('expected id matching', () => {
  it('matches exactly first', () => {
    const idx = index([
      ['t.py::a[x]', 'FAILED'],
      ['t.py::a[x y]', 'PASSED'],
    ]);
    expect(idx.lookup('t.py::a[x]')).toEqual({
      status: 'FAILED',
      matchedBy: 'exact',
      matchedId: 't.py::a[x]',
    });
  });

  it('matches a SWE-bench Verified id truncated mid-parameter by prefix, and says so', () => {
    const idx = index([
      ['astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon / m**2 s)]', 'PASSED'],
    ]);
    const v = verdict(
      idx,
      'astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon',
      'FAIL_TO_PASS',
      passes,
    );
    expect(v).toMatchObject({
      passed: true,
      matchedBy: 'prefix',
      matchedId: 'astropy/units/tests/test_format.py::test_ogip_grammar_fail[log(photon / m**2 s)]',
    });
  });

  it('does not prefix-match a complete id unless asked', () => {
    const idx = index([['t.py::test_abc', 'PASSED']]);
    expect(looksTruncated('t.py::test_ab')).toBe(false);
    expect(verdict(idx, 't.py::test_ab', 'P2P', passes)).toMatchObject({ passed: false, reason: 'missing' });
    expect(verdict(idx, 't.py::test_ab', 'P2P', passes, { prefix: 'always' })).toMatchObject({
      passed: true,
    });
    expect(verdict(idx, 't.py::test_ab[', 'P2P', passes, { prefix: 'never' })).toMatchObject({
      reason: 'missing',
    });
  });

  it('a SKIPPED and a FAILED sibling give the same verdict in both orders (SWE-bench #663)', () => {
    const a = index([
      ['tests/test_a.py::test_x[a b]', 'SKIPPED'],
      ['tests/test_a.py::test_x[a c]', 'FAILED'],
    ]);
    const b = index([
      ['tests/test_a.py::test_x[a c]', 'FAILED'],
      ['tests/test_a.py::test_x[a b]', 'SKIPPED'],
    ]);
    const maintained = (s: TestStatus) => s === 'PASSED' || s === 'SKIPPED';
    for (const idx of [a, b]) {
      expect(verdict(idx, 'tests/test_a.py::test_x[a', 'PASS_TO_PASS', maintained)).toMatchObject({
        passed: false,
        status: 'FAILED',
        reason: 'failed',
      });
    }
  });

  it('all matching siblings passing counts as passed; a skipped one does not for F2P', () => {
    const idx = index([
      ['t::f[a-1]', 'PASSED'],
      ['t::f[a-2]', 'PASSED'],
      ['t::g[a-1]', 'PASSED'],
      ['t::g[a-2]', 'SKIPPED'],
    ]);
    expect(verdict(idx, 't::f[a', 'F2P', passes).passed).toBe(true);
    expect(verdict(idx, 't::g[a', 'F2P', passes)).toMatchObject({ passed: false, reason: 'skipped' });
  });

  it('says truncated-log for a missing test when the log was cut short', () => {
    expect(verdict(index([]), 'a', 'F2P', passes, { truncatedLog: true }).reason).toBe('truncated-log');
  });
});
