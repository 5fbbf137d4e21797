import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { gradeOutputSchema, jsonSchemas, parseOutputSchema } from '../../src/cli/output-schemas.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = path.join(root, 'bin/berth.js');
const fixtures = path.join(root, 'test/fixtures/junit');
const data = process.env.BERTH_DATA ?? path.resolve(root, '../shared/data');
const work = mkdtempSync(path.join(tmpdir(), 'berth-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const berth = (...args: string[]) => spawnSync('node', [bin, ...args], { encoding: 'utf8', cwd: root });

describe('docs JSON Schemas', () => {
  it('match the zod schemas they are generated from', () => {
    for (const [name, schema] of Object.entries(jsonSchemas())) {
      const committed = JSON.parse(readFileSync(path.join(root, 'docs', name), 'utf8'));
      expect(committed, `${name} is stale: run npx tsx src/cli/output-schemas.ts --write`).toEqual(schema);
    }
  });
});

describe('berth parse', () => {
  it('prints statuses and counts for a Gradle report', () => {
    const r = berth('parse', path.join(fixtures, 'TEST-org.test.sample.SampleTestSuite.xml'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('SKIPPED  org.test.sample.SampleTestSuite.a test skipped()');
    expect(r.stdout).toMatch(/junit, 1 passed, 2 failed, 0 error, 1 skipped/);
  });

  it('--json gives one document matching the schema, merged across files', () => {
    const r = berth(
      'parse',
      '--json',
      path.join(fixtures, 'nextest-basic.xml'),
      path.join(fixtures, 'TEST-io.olamy.FlakyTest.xml'),
    );
    expect(r.status).toBe(0);
    const doc = parseOutputSchema.parse(JSON.parse(r.stdout));
    expect(doc.format).toBe('junit');
    expect(doc.counts).toEqual({ passed: 3, failed: 1, error: 0, skipped: 0 });
    expect(doc.tests.find((t) => t.id === 'io.olamy.FlakyTest.testApp')).toMatchObject({
      status: 'PASSED',
      flaky: true,
    });
    expect(doc.files).toHaveLength(2);
  });

  it('--format names the parser; an unknown one is a usage error', () => {
    const log = path.join(work, 'go.log');
    writeFileSync(log, '=== RUN   TestA\n--- PASS: TestA (0.00s)\nok  \tex/p\t0.1s\n');
    const r = berth('parse', '--json', '--format', 'go-test', log);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).tests).toEqual([
      expect.objectContaining({ id: 'TestA', status: 'PASSED', package: 'ex/p' }),
    ]);
    expect(berth('parse', '--format', 'no-such-format', log).status).toBe(2);
  });

  it('--list names every parser; no file is a usage error', () => {
    const r = berth('parse', '--list');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^junit \(junit-xml/m);
    expect(r.stdout).toMatch(/^go-test \(/m);
    expect(berth('parse').status).toBe(2);
  });

  it('a non-JUnit or corrupt XML file exits 2 naming the file', () => {
    const bad = path.join(work, 'bad.xml');
    writeFileSync(bad, '<?xml version="1.0"?>\n<suites><suite/></suites>\n');
    const r = berth('parse', '--format', 'junit', bad);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('bad.xml');
    expect(r.stderr).toContain('not a JUnit XML report');
  });

  it('several files: the total is the sum of the per-file lines; --merge counts a shared id once', () => {
    const report = path.join(fixtures, 'TEST-org.test.sample.SampleTestSuite.xml');
    const copy = path.join(work, 'again.xml');
    writeFileSync(copy, readFileSync(report));
    const separate = berth('parse', report, copy);
    expect(separate.status).toBe(0);
    expect(separate.stdout.match(/: junit, 1 passed, 2 failed, 0 error, 1 skipped/g)).toHaveLength(2);
    expect(separate.stdout).toContain('total: 8 tests in 2 files, 2 passed, 4 failed, 0 error, 2 skipped');
    expect(separate.stdout).toContain(`== ${copy}\n`);
    expect(separate.stdout).not.toContain('duplicate');
    const merged = berth('parse', '--merge', report, copy);
    expect(merged.status).toBe(0);
    expect(merged.stdout).toContain(
      'total (merged, one id counted once): 4 tests, 1 passed, 2 failed, 0 error, 1 skipped',
    );
    const json = parseOutputSchema.parse(JSON.parse(berth('parse', '--json', report, copy).stdout));
    expect(json.merged).toBe(false);
    expect(json.counts).toEqual({ passed: 2, failed: 4, error: 0, skipped: 2 });
    expect(json.tests.filter((t) => t.report === copy)).toHaveLength(4);
    const jsonMerged = parseOutputSchema.parse(
      JSON.parse(berth('parse', '--json', '--merge', report, copy).stdout),
    );
    expect(jsonMerged.merged).toBe(true);
    expect(jsonMerged.counts).toEqual({ passed: 1, failed: 2, error: 0, skipped: 1 });
  });

  it('detects XML that is not JUnit and hands it to the JUnit parser, whose refusal names the file', () => {
    const other = path.join(work, 'other.xml');
    writeFileSync(other, '<?xml version="1.0"?>\n<suites><suite/></suites>\n');
    const r = berth('parse', other);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${other}:2: not a JUnit XML report: the root element is <suites>`);
  });

  it('reads gzip-compressed reports (by magic bytes); corrupt gzip exits 2 naming the file', () => {
    const xml = readFileSync(path.join(fixtures, 'TEST-org.test.sample.SampleTestSuite.xml'));
    const gz = path.join(work, 'report.xml.gz');
    const noExt = path.join(work, 'report-compressed');
    writeFileSync(gz, gzipSync(xml));
    writeFileSync(noExt, gzipSync(xml));
    const r = berth('parse', '--quiet', gz, noExt);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/report\.xml\.gz: junit, 1 passed, 2 failed, 0 error, 1 skipped/);
    expect(r.stdout).toMatch(/report-compressed: junit, 1 passed, 2 failed, 0 error, 1 skipped/);
    const corrupt = path.join(work, 'corrupt.log.gz');
    writeFileSync(corrupt, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.from('not deflate data')]));
    const bad = berth('parse', gz, corrupt);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/corrupt\.log\.gz: .*not valid gzip data/);
    expect(bad.stdout).toMatch(/report\.xml\.gz: junit/);
  });
});

describe('berth grade', () => {
  it('SWE-bench rules on a pytest JUnit report: verdict and reasons', () => {
    const row = path.join(work, 'row.json');
    writeFileSync(
      row,
      JSON.stringify({
        instance_id: 'x__y-1',
        FAIL_TO_PASS: JSON.stringify([
          'tests.test_lib.test_always_fail',
          'tests.test_lib.test_parameterized[param',
        ]),
        PASS_TO_PASS: [
          'tests.test_lib.test_always_pass',
          'tests.test_lib.test_always_skip',
          'tests.test_lib.gone',
        ],
      }),
    );
    const r = berth(
      'grade',
      '--json',
      '--expected',
      row,
      '--report',
      path.join(fixtures, 'python-xunit-pytest.xml'),
    );
    expect(r.status).toBe(0);
    const out = gradeOutputSchema.parse(JSON.parse(r.stdout));
    expect(out).toMatchObject({ rules: 'swebench', resolved: false, reward: 0 });
    const byId = Object.fromEntries(out.verdicts.map((v) => [v.id, v]));
    expect(byId['tests.test_lib.test_always_fail']).toMatchObject({ passed: false, reason: 'failed' });
    expect(byId['tests.test_lib.test_parameterized[param']).toMatchObject({
      passed: true,
      matchedBy: 'prefix',
    });
    expect(byId['tests.test_lib.test_always_skip']).toMatchObject({ passed: true });
    expect(byId['tests.test_lib.gone']).toMatchObject({ passed: false, reason: 'missing' });
    const text = berth(
      'grade',
      '--expected',
      row,
      '--report',
      path.join(fixtures, 'python-xunit-pytest.xml'),
    );
    expect(text.stdout).toMatch(/^NOT RESOLVED \(reward 0, swebench rules, berth's default\)/);
    expect(text.stdout).toMatch(/PASS_TO_PASS\s+missing\s+tests\.test_lib\.gone/);
    expect(text.stdout).toMatch(/prefix matches used for 1 truncated id/);
    // Every reported id the truncated one stood for, not only the first.
    expect(out.prefixMatches).toEqual([
      {
        expected: 'tests.test_lib.test_parameterized[param',
        matched: ['tests.test_lib.test_parameterized[param1]', 'tests.test_lib.test_parameterized[param2]'],
      },
    ]);
    expect(text.stdout).toContain(
      'tests.test_lib.test_parameterized[param -> tests.test_lib.test_parameterized[param1], tests.test_lib.test_parameterized[param2]',
    );
  });

  it('SWE-bench rules list every prefix match, the failing sibling that decided too (issue 12)', () => {
    const row = path.join(work, 'prefix-row.json');
    writeFileSync(row, JSON.stringify({ FAIL_TO_PASS: [], PASS_TO_PASS: ['tests/t.py::test_x[a'] }));
    const log = path.join(work, 'prefix.log');
    writeFileSync(
      log,
      [
        '============================= test session starts ==============================',
        'tests/t.py::test_x[a b] SKIPPED (later)',
        'tests/t.py::test_x[a c] FAILED',
        '=========================== short test summary info ============================',
        'FAILED tests/t.py::test_x[a c] - assert 0',
        '==================== 1 failed, 1 skipped in 0.05s =====================',
        '',
      ].join('\n'),
    );
    const r = berth('grade', '--json', '--expected', row, '--report', log);
    const out = gradeOutputSchema.parse(JSON.parse(r.stdout));
    expect(out.verdicts[0]).toMatchObject({ passed: false, reason: 'failed', status: 'FAILED' });
    expect(out.verdicts[0]?.matchedIds).toEqual(['tests/t.py::test_x[a b]', 'tests/t.py::test_x[a c]']);
    expect(out.prefixMatches).toEqual([
      { expected: 'tests/t.py::test_x[a', matched: ['tests/t.py::test_x[a b]', 'tests/t.py::test_x[a c]'] },
    ]);
    const text = berth('grade', '--expected', row, '--report', log).stdout;
    expect(text).toContain('tests/t.py::test_x[a -> tests/t.py::test_x[a b], tests/t.py::test_x[a c]');
  });

  it('SWE-bench rules: a junk gold id is dropped and said; --rules swebench matches it as the harness', () => {
    const row = path.join(work, 'junk-row.json');
    writeFileSync(row, JSON.stringify({ FAIL_TO_PASS: ['tests/t.py::test_a'], PASS_TO_PASS: ['[100%]'] }));
    const log = path.join(work, 'junk.log');
    writeFileSync(
      log,
      [
        'tests/t.py::test_a PASSED',
        'PASSED [100%]',
        // The `-rA` summary: the only line the harness's parser reads test_a from.
        '=========================== short test summary info ============================',
        'PASSED tests/t.py::test_a',
        '==================== 1 passed in 0.05s =====================',
        '',
      ].join('\n'),
    );
    const dropped = gradeOutputSchema.parse(
      JSON.parse(berth('grade', '--json', '--expected', row, '--report', log).stdout),
    );
    expect(dropped).toMatchObject({
      resolved: true,
      categories: { PASS_TO_PASS: { expected: 0, passed: 0 } },
    });
    expect(dropped.droppedExpected).toEqual([
      { id: '[100%]', category: 'PASS_TO_PASS', reason: 'a pytest progress column, not a test' },
    ]);
    expect(berth('grade', '--expected', row, '--report', log).stdout).toMatch(
      /dropped from the expected tests \(1, cannot name a test\):\n {2}PASS_TO_PASS +"\[100%\]"/,
    );
    const harness = gradeOutputSchema.parse(
      JSON.parse(berth('grade', '--json', '--rules', 'swebench', '--expected', row, '--report', log).stdout),
    );
    expect(harness).toMatchObject({
      resolved: true,
      categories: { PASS_TO_PASS: { expected: 1, passed: 1 } },
    });
    expect(harness.droppedExpected).toBeUndefined();
  });

  it('--rules swebench reads a log as the harness does: XFAIL [NOTRUN] passes, captured lines count, glued outcomes do not', () => {
    const generated = path.join(root, 'test/fixtures/parsers/generated');
    const grade = (rules: string[], row: object, log: string) => {
      const file = path.join(work, `harness-${rules.length}-${path.basename(log)}.json`);
      writeFileSync(file, JSON.stringify(row));
      const r = berth('grade', '--json', ...rules, '--expected', file, '--report', path.join(generated, log));
      return gradeOutputSchema.parse(JSON.parse(r.stdout));
    };
    // pytest: the F2P test never ran (xfail(run=False)); the P2P "test" is a line a test printed.
    const pytest = {
      FAIL_TO_PASS: ['tests/test_calc.py::test_never_runs'],
      PASS_TO_PASS: ['tests/inner.py::test_phantom_two'],
    };
    expect(grade([], pytest, 'pytest-ra-vv-classic.txt').verdicts.map((v) => v.reason)).toEqual([
      'skipped',
      'missing',
    ]);
    // The harness's parse_log_pytest: `XFAIL <id>` is a pass, and so is `PASSED <id>` from captured output.
    expect(grade([], pytest, 'pytest-ra-vv-classic.txt').swebenchRules).toBe('default');
    expect(grade(['--rules', 'swebench'], pytest, 'pytest-ra-vv-classic.txt')).toMatchObject({
      swebenchRules: 'swebench',
      resolved: true,
      categories: { FAIL_TO_PASS: { passed: 1 }, PASS_TO_PASS: { passed: 1 } },
    });
    // unittest: an outcome glued to the test's output (`... partial output no newlineok`).
    const glued = {
      FAIL_TO_PASS: ['test_plain (__main__.GluedTests.test_plain)'],
      PASS_TO_PASS: ['test_prints_no_newline (__main__.GluedTests.test_prints_no_newline)'],
    };
    expect(grade([], glued, 'unittest-glued.txt').resolved).toBe(true);
    // parse_log_django reads only ` ... ok` at a line's end: the glued test is missing.
    const harness = grade(['--rules', 'swebench'], glued, 'unittest-glued.txt');
    expect(harness.resolved).toBe(false);
    expect(harness.verdicts.map((v) => v.reason ?? 'passed')).toEqual(['passed', 'missing']);
    // The text says which rules gave the verdict.
    const row = path.join(work, 'harness-text.json');
    writeFileSync(row, JSON.stringify(glued));
    const report = path.join(generated, 'unittest-glued.txt');
    expect(berth('grade', '--rules', 'swebench', '--expected', row, '--report', report).stdout).toMatch(
      /^NOT RESOLVED \(reward 0, swebench rules, the harness's verdict\)/,
    );
  });

  it('Kotlin rules on a build folder: resolved, and reward 0 when no report exists', () => {
    const expected = path.join(work, 'expected_tests.json');
    writeFileSync(
      expected,
      JSON.stringify({
        f2p_tests: ['k.T$Nested class.fixed case()'],
        p2p_tests: ['k.T.kept'],
        s2p_tests: [],
        n2p_tests: [],
        run_result: { passed_tests: ['k.T.kept'], failed_tests: [], skipped_tests: [] },
        test_patch_result: {
          passed_tests: ['k.T.kept'],
          failed_tests: ['k.T$Nested class.fixed case()'],
          skipped_tests: [],
        },
      }),
    );
    const project = path.join(work, 'project');
    mkdirSync(path.join(project, 'core/build/test-results/test'), { recursive: true });
    writeFileSync(
      path.join(project, 'core/build/test-results/test/TEST-k.T.xml'),
      '<testsuite name="k.T"><testcase classname="k.T$Nested class" name="fixed case()"/><testcase classname="k.T@1a2b3c4d" name="kept"/></testsuite>',
    );
    const ok = berth('grade', '--json', '--expected', expected, '--report', project);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ rules: 'kotlin', resolved: true, reward: 1 });
    // A build folder with no report (the build failed) is graded: reward 0.
    mkdirSync(path.join(work, 'empty-build'), { recursive: true });
    const none = berth('grade', '--expected', expected, '--report', path.join(work, 'empty-build'));
    expect(none.status).toBe(0);
    expect(none.stdout).toMatch(/^NOT RESOLVED \(reward 0, kotlin rules\)/);
    // A report path that does not exist is a mistake on the command line: exit 2, named.
    const missing = path.join(work, 'no-such-dir');
    const wrong = berth('grade', '--expected', expected, '--report', missing);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain(`${missing}: report no such file or folder`);
  });

  it.skipIf(!existsSync(path.join(data, 'reports/go-test')))(
    'Multi-SWE-bench rules on a go test log (BERTH_DATA)',
    () => {
      const row = path.join(work, 'msb.json');
      writeFileSync(
        row,
        JSON.stringify({
          run_result: { passed_tests: [], failed_tests: [], skipped_tests: [] },
          test_patch_result: { passed_tests: ['TestPass'], failed_tests: ['TestOne'], skipped_tests: [] },
          p2p_tests: { TestPass: {} },
          f2p_tests: { TestOne: {} },
          s2p_tests: {},
          n2p_tests: {},
        }),
      );
      const r = berth(
        'grade',
        '--json',
        '--rules',
        'multi-swe-bench',
        '--expected',
        row,
        '--report',
        path.join(data, 'reports/go-test/001-pass-fail-skip.txt'),
      );
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout);
      // TestPassLog (absent with the test patch, passing now) counts as fixed, so the run is valid.
      expect(out).toMatchObject({ rules: 'multi-swe-bench', resolved: false, valid: true });
      expect(out.categories.p2p).toEqual({ expected: 1, passed: 1 });
      expect(out.verdicts.find((v: { id: string }) => v.id === 'TestOne')).toMatchObject({
        reason: 'failed',
      });
    },
  );

  it('the examples of docs/parsers-junit-and-grading.md give the verdicts the doc shows', () => {
    const sample = path.join(fixtures, 'TEST-org.test.sample.SampleTestSuite.xml');
    const flaky = path.join(fixtures, 'TEST-org.test.sample.FlakyTestSuite.xml');
    const msb = path.join('examples', 'grading', 'multi-swe-bench.json');
    const kotlin = path.join('examples', 'grading', 'kotlin', 'expected_tests.json');
    const first = (...args: string[]) => {
      const r = berth('grade', ...args);
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.split('\n').slice(0, 2).join('\n');
    };
    expect(first('--expected', msb, '--instance', 'sample__gradle-1', '--report', sample, flaky)).toBe(
      'RESOLVED (reward 1, multi-swe-bench rules)\nf2p 1/1  p2p 1/1  s2p 0/0  n2p 0/0',
    );
    const second = berth(
      'grade',
      '--expected',
      msb,
      '--instance',
      'sample__gradle-2',
      '--report',
      sample,
      flaky,
    );
    expect(second.stdout).toMatch(
      /^NOT RESOLVED \(reward 0, multi-swe-bench rules\)\nf2p 1\/1 {2}p2p 1\/1 {2}s2p 0\/0 {2}n2p 0\/1\nnot passed \(1\):\n {2}n2p +failed +org\.test\.sample\.SampleTestSuite\.a test that fails\(\)\n/,
    );
    expect(first('--expected', kotlin, '--report', sample)).toBe(
      'NOT RESOLVED (reward 0, kotlin rules)\nf2p 1/1  p2p 0/1  s2p 0/0  n2p 0/0',
    );
    expect(first('--expected', kotlin, '--report', sample, flaky)).toBe(
      'NOT RESOLVED (reward 0, kotlin rules): test passed with the test patch but fails with the fix: `org.test.sample.FlakyTestSuite.flakyTest()`\nf2p 1/1  p2p 0/1  s2p 0/0  n2p 0/0',
    );
    expect(first('--rules', 'multi-swe-bench', '--expected', kotlin, '--report', sample, flaky)).toBe(
      'RESOLVED (reward 1, multi-swe-bench rules)\nf2p 1/1  p2p 1/1  s2p 0/0  n2p 0/0',
    );
  });

  it('bad expectations exit 2 naming the file', () => {
    const bad = path.join(work, 'bad.json');
    writeFileSync(bad, '{"FAIL_TO_PASS": 3}');
    const r = berth('grade', '--expected', bad, '--report', path.join(fixtures, 'nextest-basic.xml'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('bad.json');
  });
});

describe.skipIf(!existsSync(path.join(data, 'reports')))(
  'berth parse: format detection on real files (BERTH_DATA)',
  () => {
    it('TAP streams that skip everything (plan 1..0, no test point) are TAP with 0 tests', () => {
      for (const name of ['skip-all.tap', 'skipall_nomsg.tap', 'echo.tap']) {
        const r = berth('parse', path.join(data, 'reports/tap', name));
        expect(r.stderr, name).toBe('');
        expect(r.status, name).toBe(0);
        expect(r.stdout).toContain(`${name}: tap, 0 passed, 0 failed, 0 error, 0 skipped`);
      }
      expect(berth('parse', path.join(data, 'reports/tap/skip-all.tap')).stdout).toContain(
        'warning: skip all: SKIP Insufficient positron flux',
      );
    });

    it('XML with a DOCTYPE or entity declarations (XXE attempts) gets the JUnit refusal, exit 2', () => {
      const xxe = path.join(data, 'reports/junit/security/testXxe-xxe.xml');
      const oob = path.join(data, 'reports/junit/security/testXxe-oob.xml');
      const r = berth('parse', xxe, oob);
      expect(r.status).toBe(2);
      expect(r.stderr).not.toContain('cannot tell the report format');
      expect(r.stderr).toContain(`${xxe}:8: not a JUnit XML report: the root element is <r>`);
      expect(r.stderr).toContain(`${oob}:1: not well-formed XML`);
      expect(r.stderr).toContain('2 of 2 file(s) could not be parsed');
    });
  },
);
