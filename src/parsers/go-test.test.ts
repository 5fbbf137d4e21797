import { createReadStream, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { addCount, chunksOf } from './common.ts';
import { detectGoTest, parseGoTest } from './go-test.ts';
import { parseJUnit } from './junit.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const data = process.env.BERTH_DATA ?? path.resolve(root, '../shared/data');
const dir = path.join(data, 'reports/go-test');
const hasData = existsSync(dir);

const parseText = (text: string) => parseGoTest(chunksOf(text), { sourceName: 'go.log' });
const statusMap = (tests: { id: string; status: string }[]) =>
  Object.fromEntries(tests.map((t) => [t.id, t.status]));

/**
 * go-junit-report names a package-level failure as a testcase of that package:
 * `[build failed]`, `[setup failed]`, or `Failure` (a panic outside any test);
 * berth names it `<package> [build failed]` and so on.
 */
function junitKey(classname: string | undefined, name: string | undefined): string {
  if (name === 'Failure') return `${classname} [package failed]`;
  if (name?.startsWith('[')) return `${classname} ${name}`;
  return name ?? '';
}

describe.skipIf(!hasData)('go test: agreement with go-junit-report (BERTH_DATA)', () => {
  const logs = hasData ? readdirSync(dir).filter((f) => f.endsWith('.txt')) : [];
  it('has the 26 logs', () => expect(logs.length).toBe(26));
  for (const log of logs) {
    it(`${log} gives the outcomes of ${log.slice(0, 3)}-report.xml`, async () => {
      const ours = await parseGoTest(createReadStream(path.join(dir, log)), { sourceName: log });
      const report = await parseJUnit(createReadStream(path.join(dir, `${log.slice(0, 3)}-report.xml`)), {
        keepElements: true,
      });
      const theirs: Record<string, string> = {};
      const packages: Record<string, string | undefined> = {};
      for (const e of report.elements ?? []) {
        const key = junitKey(e.classname, e.name);
        theirs[key] = e.status;
        packages[key] = e.classname;
      }
      expect(statusMap(ours.tests)).toEqual(theirs);
      // Every testcase of the report is counted: a test run N times counts N times.
      const total = ours.counts.passed + ours.counts.failed + ours.counts.error + ours.counts.skipped;
      expect(total).toBe(report.elements?.length);
      for (const test of ours.tests) {
        // A compiled test binary prints no package line (007): the package stays unknown.
        if (test.package !== undefined) expect(test.package).toBe(packages[test.id]);
      }
    });
  }
});

describe('go test: console and JSON details', () => {
  it('reads nested subtests, skips and the package summary', async () => {
    const result = await parseText(
      [
        '=== RUN   TestA',
        '=== RUN   TestA/with_space',
        '=== PAUSE TestA/with_space',
        '=== CONT  TestA/with_space',
        '    a_test.go:9: boom',
        '--- FAIL: TestA (0.00s)',
        '    --- FAIL: TestA/with_space (0.00s)',
        '=== RUN   TestB',
        '    b_test.go:3: not now',
        '--- SKIP: TestB (0.00s)',
        'FAIL',
        'FAIL\texample.com/m/p\t0.012s',
      ].join('\n'),
    );
    expect(statusMap(result.tests)).toEqual({
      TestA: 'FAILED',
      'TestA/with_space': 'FAILED',
      TestB: 'SKIPPED',
    });
    expect(result.tests.every((t) => t.package === 'example.com/m/p')).toBe(true);
    expect(result.truncated).toBe(false);
  });

  it('a panic inside a test fails that test and the ones that never finished', async () => {
    const result = await parseText(
      [
        '=== RUN   TestOk',
        '--- PASS: TestOk (0.00s)',
        '=== RUN   TestBoom',
        '--- FAIL: TestBoom (0.00s)',
        'panic: runtime error: index out of range [recovered]',
        '=== RUN   TestNever',
        'goroutine 7 [running]:',
        'FAIL\texample.com/m/p\t0.004s',
      ].join('\n'),
    );
    expect(statusMap(result.tests)).toEqual({ TestOk: 'PASSED', TestBoom: 'FAILED', TestNever: 'FAILED' });
    expect(result.tests.find((t) => t.id === 'TestNever')?.message).toMatch(/panicked/);
  });

  it('a log cut short is flagged truncated and the running test counts as FAILED', async () => {
    const result = await parseText(
      '=== RUN   TestA\n--- PASS: TestA (0.01s)\n=== RUN   TestB\n    b_test.go:1: wor',
    );
    expect(statusMap(result.tests)).toEqual({ TestA: 'PASSED', TestB: 'FAILED' });
    expect(result.truncated).toBe(true);
  });

  it('repeated names (-count=2) merge with FAILED winning', async () => {
    const result = await parseText(
      '=== RUN   TestF\n--- PASS: TestF (0.00s)\n=== RUN   TestF\n--- FAIL: TestF (0.00s)\nFAIL\tp\t0.1s\n',
    );
    expect(statusMap(result.tests)).toEqual({ TestF: 'FAILED' });
    expect(result.warnings.join()).toMatch(/duplicate/);
  });

  it('JSON: a build failure reported through FailedBuild, and CRLF', async () => {
    const lines = [
      '{"ImportPath":"example.com/m/q [example.com/m/q.test]","Action":"build-output","Output":"q_test.go:3:1: syntax error\\n"}',
      '{"ImportPath":"example.com/m/q [example.com/m/q.test]","Action":"build-fail"}',
      '{"Time":"2025-01-01T00:00:00Z","Action":"start","Package":"example.com/m/q"}',
      '{"Time":"2025-01-01T00:00:00Z","Action":"output","Package":"example.com/m/q","Output":"FAIL\\texample.com/m/q [build failed]\\n"}',
      '{"Time":"2025-01-01T00:00:00Z","Action":"fail","Package":"example.com/m/q","Elapsed":0,"FailedBuild":"example.com/m/q [example.com/m/q.test]"}',
    ];
    const result = await parseText(lines.join('\r\n'));
    expect(statusMap(result.tests)).toEqual({ 'example.com/m/q [build failed]': 'ERROR' });
  });

  it('detects go test output', () => {
    expect(
      detectGoTest('{"Time":"2019-10-09T00:00:00Z","Action":"run","Package":"p","Test":"T"}'),
    ).toBeGreaterThan(0.9);
    expect(detectGoTest('=== RUN   TestA\n--- PASS: TestA (0.00s)\n')).toBeGreaterThan(0.8);
    expect(detectGoTest('PASSED tests/a.py::t')).toBe(0);
  });
});

describe('go test: repeated runs and failing benchmarks, against go-junit-report (issue 12)', () => {
  // Written by the real `go test` and go-junit-report v2 (test/fixtures/parsers/generated, regenerate.sh).
  const generated = path.join(root, 'test/fixtures/parsers/generated');
  const total = (c: { passed: number; failed: number; error: number; skipped: number }) =>
    c.passed + c.failed + c.error + c.skipped;

  for (const [log, xml] of [
    ['go-count.txt', 'go-count.junit.xml'],
    ['go-count.json.txt', 'go-count.junit.xml'],
    ['go-bench-fail.txt', 'go-bench-fail.junit.xml'],
    ['go-bench-fail.json.txt', 'go-bench-fail.junit.xml'],
  ] as const) {
    it(`${log}: every run counted, benchmarks per name, as ${xml}`, async () => {
      const ours = await parseGoTest(createReadStream(path.join(generated, log)), { sourceName: log });
      const report = await parseJUnit(createReadStream(path.join(generated, xml)), { keepElements: true });
      const theirs = { passed: 0, failed: 0, error: 0, skipped: 0 };
      for (const e of report.elements ?? []) addCount(theirs, e.status);
      expect(ours.counts).toEqual(theirs);
      // The merged verdict per name: a run that failed makes the test FAILED.
      const worst: Record<string, string> = {};
      for (const e of report.elements ?? [])
        if (worst[e.name as string] !== 'FAILED') worst[e.name as string] = e.status;
      expect(statusMap(ours.tests)).toEqual(worst);
      expect(total(ours.counts)).toBe(report.elements?.length);
    });
  }

  it('`--- FAIL: BenchmarkBroken` is that benchmark failing, not a package error', async () => {
    const ours = await parseGoTest(createReadStream(path.join(generated, 'go-bench-fail.txt')));
    expect(statusMap(ours.tests)).toEqual({ BenchmarkAdd: 'PASSED', BenchmarkBroken: 'FAILED' });
    expect(ours.tests.some((t) => t.pseudo)).toBe(false);
    expect(ours.warnings.join('\n')).not.toContain('package failed');
  });

  it('a test reported three times counts three times (-count=3)', async () => {
    const ours = await parseText(
      [
        '=== RUN   TestA',
        '--- PASS: TestA (0.00s)',
        '=== RUN   TestA',
        '--- FAIL: TestA (0.00s)',
        '=== RUN   TestA',
        '--- PASS: TestA (0.00s)',
        'FAIL',
        'FAIL\tex/p\t0.01s',
      ].join('\n'),
    );
    expect(ours.counts).toEqual({ passed: 2, failed: 1, error: 0, skipped: 0 });
    expect(statusMap(ours.tests)).toEqual({ TestA: 'FAILED' });
  });
});
