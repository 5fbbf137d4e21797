/**
 * berth's Kotlin Benchmark grading against the dataset's own pipeline, run as it is
 * (BERTH_DATA/kotlin-swe-bench/reference-grader: test.sh, kotlin_logs_collector.sh,
 * junit_compare.py; never copied into berth), on minimal Gradle report trees. test.sh runs
 * unchanged under bubblewrap with /home/shadow (the project, with a stand-in gradlew),
 * /tests (the reference files, expected_tests.json, an empty test.patch) and /logs bound in.
 * Where the two disagree, berth's reason must say why (issue 12).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { collectReports, gradeKotlin, inspectReport, kotlinDisagreement } from './kotlin-benchmark.ts';
import type { MsbExpected } from './multi-swe-bench.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const data = process.env.BERTH_DATA ?? path.resolve(root, '../shared/data');
const reference = path.join(data, 'kotlin-swe-bench', 'reference-grader');
const hasReference = existsSync(path.join(reference, 'junit_compare.py'));
const work = mkdtempSync(path.join(tmpdir(), 'berth-kotlin-ref-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** One f2p (`adds()`) and one p2p (`subtracts()`) test, shared with test/docker/kotlin-reference.test.ts. */
const expectedFile = path.join(root, 'test/fixtures/kotlin-reference/expected_tests.json');
const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as MsbExpected;

const BWRAP = [
  '--ro-bind',
  '/usr',
  '/usr',
  '--symlink',
  'usr/bin',
  '/bin',
  '--symlink',
  'usr/lib',
  '/lib',
  '--symlink',
  'usr/lib64',
  '/lib64',
  '--symlink',
  'usr/sbin',
  '/sbin',
  '--ro-bind',
  '/etc',
  '/etc',
  '--proc',
  '/proc',
  '--dev',
  '/dev',
  '--tmpfs',
  '/tmp',
  '--unshare-all',
  '--die-with-parent',
  '--clearenv',
  '--setenv',
  'PATH',
  '/usr/bin:/bin',
  '--chdir',
  '/',
];

/** Why the reference cannot run here, or undefined when it can. */
function referenceUnavailable(): string | undefined {
  if (!hasReference) return `the dataset's grader is not in ${reference} (set BERTH_DATA)`;
  const probe = spawnSync('bwrap', [...BWRAP, '/usr/bin/python3', '-c', 'import xml.etree.ElementTree'], {
    encoding: 'utf8',
  });
  if (probe.error || probe.status !== 0)
    return `bubblewrap cannot run python3 here: ${probe.error?.message ?? probe.stderr.trim()}`;
  return undefined;
}
const unavailable = referenceUnavailable();

/** A project whose reports are the given files (relative path -> content, `Buffer` for raw bytes). */
function project(label: string, reports: Record<string, string | Buffer>): string {
  const dir = path.join(work, label, 'shadow');
  mkdirSync(dir, { recursive: true });
  // Stands in for Gradle: the reports are already where `gradle test` writes them.
  writeFileSync(path.join(dir, 'gradlew'), '#!/bin/sh\necho "gradle $*"\n');
  chmodSync(path.join(dir, 'gradlew'), 0o755);
  for (const [rel, content] of Object.entries(reports)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return dir;
}

/** Runs the dataset's test.sh on the project; its reward and output. */
function runReference(dir: string): { reward: number | undefined; output: string } {
  const base = path.dirname(dir);
  const tests = path.join(base, 'tests');
  const logs = path.join(base, 'logs');
  mkdirSync(tests, { recursive: true });
  mkdirSync(logs, { recursive: true });
  for (const f of ['test.sh', 'kotlin_logs_collector.sh', 'junit_compare.py'])
    copyFileSync(path.join(reference, f), path.join(tests, f));
  copyFileSync(expectedFile, path.join(tests, 'expected_tests.json'));
  writeFileSync(path.join(tests, 'test.patch'), '');
  const run = spawnSync(
    'bwrap',
    [
      ...BWRAP,
      '--bind',
      dir,
      '/home/shadow',
      '--ro-bind',
      tests,
      '/tests',
      '--bind',
      logs,
      '/logs',
      'bash',
      '/tests/test.sh',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  const rewardFile = path.join(logs, 'verifier', 'reward.txt');
  const reward = existsSync(rewardFile) ? Number(readFileSync(rewardFile, 'utf8').trim()) : undefined;
  return { reward, output: `${run.stdout}${run.stderr}` };
}

async function both(dir: string) {
  const files = await collectReports(dir);
  const report = await gradeKotlin(expected, files);
  const ref = runReference(dir);
  const disagreement = kotlinDisagreement({
    referenceReward: ref.reward,
    report,
    files: await Promise.all(files.map(inspectReport)),
    testShOutput: ref.output,
  });
  return { berth: report.reward, reference: ref.reward, disagreement, report, ref };
}

const RESULTS = 'build/test-results/test';
const suite = (cases: string, extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="demo.CalcTest" tests="2" failures="0" errors="0">\n${cases}\n${extra}</testsuite>\n`;
const passing =
  '<testcase name="adds()" classname="demo.CalcTest" time="0.01"/>\n<testcase name="subtracts()" classname="demo.CalcTest" time="0.01"/>';

describe('Kotlin Benchmark: berth against the dataset own grading pipeline', () => {
  it('agrees on a plain passing and a plain failing report', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const ok = await both(project('ok', { [`${RESULTS}/TEST-demo.CalcTest.xml`]: suite(passing) }));
    expect([ok.berth, ok.reference, ok.disagreement]).toEqual([1, 1, undefined]);
    const failing = passing.replace(
      '<testcase name="adds()" classname="demo.CalcTest" time="0.01"/>',
      '<testcase name="adds()" classname="demo.CalcTest" time="0.01"><failure message="expected 3">x</failure></testcase>',
    );
    const ko = await both(project('ko', { [`${RESULTS}/TEST-demo.CalcTest.xml`]: suite(failing) }));
    expect([ko.berth, ko.reference, ko.disagreement]).toEqual([0, 0, undefined]);
  });

  it('a testcase whose name is the fully qualified method, with no classname: the same id as the reference', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const cases =
      '<testcase name="demo.CalcTest.adds()" time="0.01"/>\n<testcase name="demo.CalcTest.subtracts()" time="0.01"/>';
    const r = await both(project('no-classname', { [`${RESULTS}/TEST-demo.CalcTest.xml`]: suite(cases) }));
    expect(r.reference).toBe(1);
    expect(r.berth).toBe(1);
    expect(r.disagreement).toBeUndefined();
  });

  it('a UTF-8 BOM before <?xml: the reference cannot parse its merged file (0), berth reads it (1), and says why', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(suite(passing))]);
    const r = await both(project('bom', { [`${RESULTS}/TEST-demo.CalcTest.xml`]: bom }));
    expect(r.reference).toBe(0);
    expect(r.ref.output).toMatch(/failed to parse JUnit XML/);
    expect(r.berth).toBe(1);
    expect(r.disagreement).toMatchObject({ berth_reward: 1, reference_reward: 0 });
    expect(r.disagreement?.reason).toMatch(
      /TEST-demo\.CalcTest\.xml start\(s\) with a UTF-8 byte-order mark/,
    );
  });

  it('ANSI escapes as &#x1B; in <system-out>: the reference rejects the XML (0), berth reads it (1), and says why', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const out = '<system-out>&#x1B;[32mgreen&#x1B;[0m &#27;[1m</system-out>\n';
    const r = await both(project('ansi', { [`${RESULTS}/TEST-demo.CalcTest.xml`]: suite(passing, out) }));
    expect(r.reference).toBe(0);
    expect(r.berth).toBe(1);
    expect(r.disagreement?.reason).toMatch(/character reference XML 1\.0 forbids/);
  });

  it('no report at all: the reference writes 1 (exit-code fallback), berth 0 (fail-closed), and the reason says so', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const r = await both(project('none', {}));
    expect(r.ref.output).toMatch(/falling back to exit-code reward/);
    expect(r.reference).toBe(1);
    expect(r.berth).toBe(0);
    expect(r.disagreement).toMatchObject({ berth_reward: 0, reference_reward: 1 });
    expect(r.disagreement?.reason).toMatch(/no JUnit report exists.*always 0.*reward 1.*fail-closed/);
  });

  it('another disagreement quotes the reference message beside berth reason', () => {
    const d = kotlinDisagreement({
      referenceReward: 0,
      report: {
        rules: 'kotlin',
        resolved: true,
        reward: 1,
        valid: true,
        verdicts: [],
        categories: {},
        prefixMatches: [],
        warnings: [],
      },
      files: [{ file: '/x/TEST-a.xml', bom: false, forbiddenCharRef: false }],
      testShOutput: 'gradle clean test\nVerification failed:\n  f2p NOT in f2p_map [MISSING]: a.T.x\n',
    });
    expect(d?.reason).toBe(
      'reference: Verification failed: | f2p NOT in f2p_map [MISSING]: a.T.x; berth: every expected test landed in its category',
    );
  });
});
