import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunksOf } from './common.ts';
import { splitDirective, tapParser } from './tap.ts';
import type { ParseResult } from './types.ts';

const fixtures = join(import.meta.dirname, '../../test/fixtures/parsers');
const dataDir = process.env.BERTH_DATA ?? join(import.meta.dirname, '../../../shared/data');
const tapData = join(dataDir, 'reports/tap');
let tapFiles: string[] = [];
try {
  tapFiles = readdirSync(tapData).filter((f) => f.endsWith('.tap'));
} catch {
  tapFiles = [];
}

const parseText = (text: string, keepElements = false): Promise<ParseResult> =>
  tapParser.parse(chunksOf(text), { keepElements });
const fixture = (name: string) => readFileSync(join(fixtures, name), 'utf8');
const statusMap = (result: ParseResult) => Object.fromEntries(result.tests.map((t) => [t.id, t.status]));

describe('TAP parser on real streams (tapjs/tap-parser fixtures)', () => {
  it('combined.tap: directives, missing numbers and descriptions, checked by hand', async () => {
    const result = await parseText(fixture('tap-combined.tap'));
    expect(statusMap(result)).toEqual({
      '#1': 'PASSED',
      'basset hounds got long ears': 'PASSED',
      'all hell broke loose': 'FAILED',
      '#4': 'SKIPPED', // not ok # TODO
      'say "live without loving",': 'PASSED',
      "I'd beg off.": 'PASSED',
      '#7': 'SKIPPED', // ok # Skip
      'Girls are such exquisite hell': 'PASSED',
      'Elegy 9B': 'PASSED', // # TOdO on an ok point
      '#10': 'FAILED',
    });
    expect(result.tests.filter((t) => t.todo).map((t) => t.id)).toEqual(['#4', 'Elegy 9B']);
    expect(result.warnings).toEqual([]);
  });

  it('subtest-mixing.tap: streamed, buffered and mixed subtests give the same ids', async () => {
    const result = await parseText(fixture('tap-subtest-mixing.tap'));
    const ids = new Set(result.tests.map((t) => t.id));
    for (let i = 1; i <= 9; i++) {
      for (const id of [`x${i}`, `x${i} > y`, `x${i} > y > ypoint`]) expect(ids.has(id), id).toBe(true);
    }
    expect(result.tests).toHaveLength(27);
    expect(result.counts.passed).toBe(27);
  });

  it('todo.tap: nested subtests three deep, TODO points that pass', async () => {
    const result = await parseText(fixture('tap-todo.tap'));
    expect(statusMap(result)).toMatchObject({
      'a set of tests to be done later > the subset > has some of these things > ten is also truthy':
        'PASSED',
      'a set of tests to be done later > the subset': 'PASSED',
      'another set of tests > is marked TODO': 'PASSED',
    });
    expect(result.tests).toHaveLength(13);
  });

  it("perl-test2-streamed.tap: a subtest announced at its parent's indent", async () => {
    const result = await parseText(fixture('tap-perl-test2-streamed.tap'));
    expect(result.tests.map((t) => t.id)).toEqual([
      'my_streamy_test > subtest event A',
      'my_streamy_test > subtest event B',
      'Subtest: my_streamy_test',
      'my_streamy_test_plan > subtest event A',
      'my_streamy_test_plan > subtest event B',
      'Subtest: my_streamy_test_plan',
    ]);
  });

  it('indent.tap: skip and todo inside subtests; an unterminated YAML block is a warning', async () => {
    const result = await parseText(fixture('tap-indent.tap'));
    expect(statusMap(result)).toMatchObject({
      'second > this passes > granddaughter': 'SKIPPED',
      'second > this passes > grandson': 'PASSED',
      'second > this passes > grandchild': 'SKIPPED',
      'first > true is ok': 'PASSED',
    });
    expect(result.warnings.some((w) => w.includes('YAML block not closed'))).toBe(true);
  });

  it('bailout.tap: points after Bail out! are ignored, with warnings', async () => {
    const result = await parseText(fixture('tap-bailout.tap'));
    expect(result.counts).toEqual({ passed: 3, failed: 0, error: 0, skipped: 0 });
    expect(result.warnings).toEqual([
      'line 5: Bail out! GERONIMMMOOOOOO!!!',
      '2 test point(s) after Bail out! ignored',
    ]);
  });

  it('hashes.tap: escaped hashes stay in descriptions, directives follow the first unescaped #', async () => {
    const result = await parseText(fixture('tap-hashes.tap'));
    expect(result.tests.map((t) => [t.id, Boolean(t.todo)])).toEqual([
      ['contains # hash', false],
      ['directive', true],
      ['escaped \\ slash \\', true],
      ['not todo', false],
      ['yes todo', true],
      ['not todo # hash # todo', false],
    ]);
  });

  it('yamlish.tap: the YAML message becomes the failure message', async () => {
    const result = await parseText(fixture('tap-yamlish.tap'));
    expect(result.tests[0]).toMatchObject({
      id: 'Resolve address',
      status: 'FAILED',
      message: "Failed with error 'hostname peebles.example.com not found'",
    });
  });

  it('creative-liberties.tap: YAML after a bare ok is not garbage', async () => {
    const result = await parseText(fixture('tap-creative-liberties.tap'));
    expect(result.tests.length).toBe(9);
    expect(result.warnings).toEqual([]);
  });

  it('subtest-unfinished.tap is flagged as truncated', async () => {
    const result = await parseText(fixture('tap-subtest-unfinished.tap'));
    expect(result.truncated).toBe(true);
    expect(statusMap(result)).toEqual({ '#1': 'PASSED', 'unfinished > #1': 'PASSED' });
  });

  it('node:test output: top-level and nested subtests', async () => {
    const text = [
      'TAP version 13',
      '# Subtest: adds',
      'ok 1 - adds',
      '  ---',
      '  duration_ms: 0.5',
      '  ...',
      '# Subtest: math',
      '    # Subtest: divides',
      '    not ok 1 - divides',
      '      ---',
      "      error: 'Expected values to be strictly equal'",
      '      ...',
      '    1..1',
      'not ok 2 - math',
      '1..2',
      '# tests 2',
    ].join('\n');
    const result = await parseText(text);
    expect(statusMap(result)).toEqual({ adds: 'PASSED', 'math > divides': 'FAILED', math: 'FAILED' });
    expect(result.warnings).toEqual([]);
  });

  it('garbage and plan mismatches are warnings, never errors', async () => {
    const result = await parseText('1..3\nok 1 a\n\u0000\u0001 binary junk\nnot ok 2 b\n');
    expect(result.counts).toEqual({ passed: 1, failed: 1, error: 0, skipped: 0 });
    expect(result.warnings.join('\n')).toMatch(/not TAP/);
    expect(result.warnings.join('\n')).toMatch(/plan 1\.\.3/);
    expect(result.truncated).toBe(true);
  });

  it('splitDirective', () => {
    expect(splitDirective('- a \\# b # SKIP no network')).toEqual({
      description: 'a # b',
      directive: 'skip',
      reason: 'no network',
    });
    expect(splitDirective('Hamlette # TODOORNOTTODO')).toEqual({ description: 'Hamlette' });
    expect(splitDirective('# skipped on foobar system')).toMatchObject({ directive: 'skip' });
  });
});

describe.skipIf(tapFiles.length === 0)('TAP parser on every stream in BERTH_DATA/reports/tap', () => {
  it.each(tapFiles)('%s parses without a crash; counts follow its test points', async (file) => {
    const text = readFileSync(join(tapData, file), 'utf8');
    const result = await parseText(text, true);
    // Every recorded element is a test point of the stream (no invented results).
    const points = text.split(/\r?\n/).filter((l) => /^\s*(not )?ok\b/.test(l)).length;
    expect(result.elements?.length ?? 0).toBeLessThanOrEqual(points);
    const c = result.counts;
    expect(c.passed + c.failed + c.error + c.skipped).toBe(result.tests.length);
    // A stream whose leading plan disagrees with what it reports says so.
    const plan = /^1\.\.(\d+)/.exec(text);
    if (plan && !/Bail out!/i.test(text) && !/^\s+/m.test(text)) {
      const top = text.split(/\r?\n/).filter((l) => /^(not )?ok\b/.test(l)).length;
      if (top !== Number(plan[1])) expect(result.warnings.join('\n')).toMatch(/plan 1\.\./);
    }
    if (/^\s*Bail out!/im.test(text)) expect(result.warnings.join('\n')).toMatch(/Bail out!/);
  });
});
