import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chunksOf } from '../parsers/common.ts';
import { parseJUnit } from '../parsers/junit.ts';
import {
  collectReports,
  deleteStaleReports,
  gradeKotlin,
  kotlinStatusMap,
  kotlinTestId,
  readKotlinExpected,
} from './kotlin-benchmark.ts';
import type { MsbExpected } from './multi-swe-bench.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const data = process.env.BERTH_DATA ?? path.resolve(root, '../shared/data');
const tasksDir = path.join(data, 'kotlin-swe-bench');
const hasData = existsSync(tasksDir);
const work = mkdtempSync(path.join(tmpdir(), 'berth-kotlin-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const esc = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');

/** Splits an expected id back into classname and name the way Gradle would write them. */
function split(id: string): { classname: string; name: string } {
  let start = 0;
  for (let dot = id.indexOf('.'); dot !== -1; dot = id.indexOf('.', dot + 1)) {
    const segment = id.slice(start, dot);
    // The class is the first segment that starts with a capital (nested classes follow after `$`).
    if (/^[A-Z]/.test(segment)) {
      const candidate = { classname: id.slice(0, dot), name: id.slice(dot + 1) };
      if (kotlinTestId(candidate.classname, candidate.name) === id) return candidate;
    }
    start = dot + 1;
  }
  const dot = id.indexOf('.');
  return { classname: id.slice(0, dot), name: id.slice(dot + 1) };
}

type Result = 'pass' | 'fail' | 'skip' | 'error' | 'skip+fail';
interface Case {
  id?: string;
  classname?: string;
  name?: string;
  result: Result;
}

function testcase(c: Case): string {
  const parts = c.id !== undefined ? split(c.id) : { classname: c.classname ?? '', name: c.name ?? '' };
  const body = {
    pass: '',
    fail: '<failure message="boom">trace</failure>',
    error: '<error message="boom"/>',
    skip: '<skipped/>',
    'skip+fail': '<skipped/><failure message="boom"/>',
  }[c.result];
  return `<testcase name="${esc(parts.name)}" classname="${esc(parts.classname)}" time="0.01">${body}</testcase>`;
}

/** Writes a Gradle-like build tree with one report per module; returns the project root. */
function writeProject(label: string, modules: Record<string, Case[]>): string {
  const project = path.join(work, label);
  for (const [module, cases] of Object.entries(modules)) {
    const dir = path.join(project, module, 'build/test-results/test');
    mkdirSync(dir, { recursive: true });
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="${module}" tests="${cases.length}">\n${cases.map(testcase).join('\n')}\n</testsuite>\n`;
    writeFileSync(path.join(dir, `TEST-${module.replace(/\//g, '-')}.xml`), xml);
  }
  return project;
}

const allExpected = (e: MsbExpected) => [...e.f2p_tests, ...e.p2p_tests, ...e.s2p_tests, ...e.n2p_tests];

async function grade(expected: MsbExpected, project: string, dropParameterized = true) {
  return gradeKotlin(expected, await collectReports(project), { dropParameterized });
}

const tasks = hasData
  ? readdirSync(tasksDir).filter((d) => existsSync(path.join(tasksDir, d, 'expected_tests.json')))
  : [];

describe.skipIf(!hasData)(
  'Kotlin Benchmark grading on the real expected_tests.json files (BERTH_DATA)',
  () => {
    it('has the three tasks', () => expect(tasks.length).toBe(3));

    for (const task of tasks) {
      describe(task, () => {
        const load = () => readKotlinExpected(path.join(tasksDir, task, 'expected_tests.json'));

        it('the id split used to write reports round-trips every expected id', async () => {
          const expected = await load();
          const bad = allExpected(expected).filter((id) => {
            const { classname, name } = split(id);
            return kotlinTestId(classname, name) !== id;
          });
          expect(bad).toEqual([]);
        });

        it('all passing: resolved, reward 1', async () => {
          const expected = await load();
          const ids = allExpected(expected);
          const half = Math.floor(ids.length / 2);
          const project = writeProject(`${task}-pass`, {
            core: ids.slice(0, half).map((id) => ({ id, result: 'pass' as const })),
            'rules/style': ids.slice(half).map((id) => ({ id, result: 'pass' as const })),
          });
          const r = await grade(expected, project);
          expect(r.verdicts.filter((v) => !v.passed)).toEqual([]);
          expect(r).toMatchObject({ resolved: true, reward: 1, valid: true });
          expect(r.verdicts).toHaveLength(ids.length);
        });

        it('one f2p (or n2p) failing: unresolved, that test says failed', async () => {
          const expected = await load();
          const target = expected.f2p_tests[0] ?? (expected.n2p_tests[0] as string);
          const project = writeProject(`${task}-f2p-fails`, {
            core: allExpected(expected).map((id) => ({
              id,
              result: id === target ? ('fail' as const) : ('pass' as const),
            })),
          });
          const r = await grade(expected, project);
          expect(r.resolved).toBe(false);
          expect(r.verdicts.filter((v) => !v.passed)).toEqual([
            expect.objectContaining({ id: target, passed: false, status: 'FAILED', reason: 'failed' }),
          ]);
        });

        it('a p2p missing: unresolved, that test says missing', async () => {
          const expected = await load();
          const gone = expected.p2p_tests[3] as string;
          const project = writeProject(`${task}-p2p-missing`, {
            core: allExpected(expected)
              .filter((id) => id !== gone)
              .map((id) => ({ id, result: 'pass' as const })),
          });
          const r = await grade(expected, project);
          expect(r).toMatchObject({ resolved: false, valid: true });
          expect(r.verdicts.filter((v) => !v.passed)).toEqual([
            { id: gone, category: 'p2p', passed: false, reason: 'missing' },
          ]);
        });
      });
    }

    it('detekt: ids with $, spaces, () and newlines match; a duplicate with mixed statuses takes the worst (FAIL > SKIP > PASS)', async () => {
      const expected = await readKotlinExpected(
        path.join(tasksDir, 'detekt_detekt-7212', 'expected_tests.json'),
      );
      const ids = allExpected(expected);
      const dollar = ids.find((id) => id.includes('$') && id.includes(' ') && id.endsWith('()')) as string;
      const multiline = ids.find((id) => id.includes('\n')) as string;
      expect(dollar).toBeDefined();
      expect(multiline).toBeDefined();
      const skipped = ids.find(
        (id) => id !== dollar && id !== multiline && expected.p2p_tests.includes(id),
      ) as string;
      const project = writeProject('detekt-dup', {
        core: ids.map((id) => ({ id, result: 'pass' as const })),
        // The same p2p id reported again by another module: once skipped, once failed.
        other: [
          { id: dollar, result: 'skip' },
          { id: skipped, result: 'skip' },
          { id: dollar, result: 'fail' },
        ],
      });
      const r = await grade(expected, project);
      const byId = new Map(r.verdicts.map((v) => [v.id, v]));
      expect(byId.get(dollar)).toMatchObject({ passed: false, status: 'FAILED' });
      expect(byId.get(skipped)).toMatchObject({ passed: false, status: 'SKIPPED', reason: 'skipped' });
      expect(byId.get(multiline)).toMatchObject({ passed: true });
      // A p2p test that fails with the fix after passing with the test patch also makes the run invalid.
      expect(r.invalidReason).toMatch(/passed with the test patch but fails with the fix/);
    });

    it('empty or missing report: reward 0 with the reason', async () => {
      const expected = await readKotlinExpected(
        path.join(tasksDir, 'pinterest_ktlint-2029', 'expected_tests.json'),
      );
      const missing = await gradeKotlin(expected, await collectReports(path.join(work, 'no-such-project')));
      expect(missing).toMatchObject({
        reward: 0,
        resolved: false,
        error: expect.stringMatching(/no JUnit report/),
      });
      expect(missing.verdicts.every((v) => v.reason === 'missing')).toBe(true);
      const emptyDir = path.join(work, 'empty-report/build/test-results/test');
      mkdirSync(emptyDir, { recursive: true });
      writeFileSync(path.join(emptyDir, 'TEST-x.xml'), '');
      const empty = await gradeKotlin(expected, await collectReports(path.join(work, 'empty-report')));
      expect(empty).toMatchObject({ reward: 0, error: expect.stringMatching(/cannot be read.*empty/) });
    });
  },
);

describe('Kotlin Benchmark rules on raw testcase elements', () => {
  const expected: MsbExpected = {
    run_result: { passed_tests: ['k.T.p'], failed_tests: [], skipped_tests: [] },
    test_patch_result: { passed_tests: ['k.T.p'], failed_tests: ['k.T.f'], skipped_tests: [] },
    f2p_tests: ['k.T.f'],
    p2p_tests: ['k.T.p'],
    s2p_tests: [],
    n2p_tests: [],
  };

  it('within a testcase <skipped> wins over <failure> (the default parser says FAILED)', async () => {
    const xml = `<testsuite>${testcase({ classname: 'k.T', name: 'x', result: 'skip+fail' })}</testsuite>`;
    const parsed = await parseJUnit(chunksOf(xml), { keepElements: true });
    expect(parsed.tests[0]?.status).toBe('FAILED');
    expect(kotlinStatusMap([{ file: 'TEST-k.xml', elements: parsed.elements ?? [] }]).get('k.T.x')).toBe(
      'SKIP',
    );
  });

  it('strips @hash suffixes, a testcase without classname is its name, drops parameterised names when asked', async () => {
    const xml = `<testsuite>
      <testcase classname="k.T@1a2b3c" name="p@ff"/>
      <testcase name="orphan"/>
      <testcase classname="k.T" name="f()[1]"><failure/></testcase>
      <testcase classname="k.T" name="f()[2]"/>
      <testcase classname="k.T" name="f"/>
    </testsuite>`;
    const parsed = await parseJUnit(chunksOf(xml), { keepElements: true });
    const reports = [{ file: '/x/build/test-results/test/TEST-k.T.xml', elements: parsed.elements ?? [] }];
    expect([...kotlinStatusMap(reports).entries()]).toEqual([
      ['k.T.p', 'PASS'],
      ['orphan', 'PASS'],
      ['k.T.f', 'PASS'],
    ]);
    expect(kotlinStatusMap(reports, { dropParameterized: false }).get('k.T.f()[1]')).toBe('FAIL');
  });

  it('grades a generated project with parameterised failures ignored', async () => {
    const project = writeProject('params', {
      core: [
        { classname: 'k.T@6d06d69c', name: 'p', result: 'pass' },
        { classname: 'k.T', name: 'f', result: 'pass' },
        { classname: 'k.T', name: 'p[1]', result: 'fail' },
      ],
    });
    expect(await grade(expected, project)).toMatchObject({ resolved: true, reward: 1 });
    // Not dropped, the failing parameterised case is a new failing test: still valid, still resolved.
    const kept = await grade(expected, project, false);
    expect(kept.resolved).toBe(true);
  });

  it('collects reports at any depth and deletes stale ones', async () => {
    const project = path.join(work, 'collect');
    const files = [
      'build/test-results/test/TEST-a.xml',
      'lib/deep/mod/build/test-results/testDebugUnitTest/sub/TEST-b.xml',
      'build/reports/TEST-not-a-result.xml',
      'build/test-results/test/other.xml',
    ];
    for (const f of files) {
      mkdirSync(path.dirname(path.join(project, f)), { recursive: true });
      writeFileSync(path.join(project, f), '<testsuite/>');
    }
    expect((await collectReports(project)).map((f) => path.relative(project, f))).toEqual([
      files[0],
      files[1],
    ]);
    expect(await deleteStaleReports(project)).toBe(2);
    expect(await collectReports(project)).toEqual([]);
    expect(existsSync(path.join(project, files[2] as string))).toBe(true);
  });
});
