/**
 * The decisions of the runner-report layer on hand-made probe files (the corpus runs the real
 * probes): what refuses a pass and what is only recorded.
 */
import { describe, expect, it } from 'vitest';
import { type CrossCheckInput, crossCheck } from '../../src/verifiers/tampering/cross-check.ts';
import type { ArmedProbes } from '../../src/verifiers/tampering/probes.ts';

const armed: ArmedProbes = {
  nonce: 'n0',
  testCommand: 'python3 -m pytest -rA t.py',
  command: 'pytest',
  pytest: true,
  node: false,
  notes: [],
  binds: [],
  setupScript: '',
  collectScript: '',
  frame: '@@f@@',
  outDir: '/tmp/x/out',
  codeFiles: [],
};

function input(
  report: Record<string, unknown> | undefined,
  extra: Partial<CrossCheckInput> = {},
): CrossCheckInput {
  return {
    armed,
    files: {
      pytestStarted: JSON.stringify({ nonce: 'n0' }),
      ...(report ? { pytestReport: JSON.stringify({ nonce: 'n0', exitstatus: 0, ...report }) } : {}),
    },
    exitCode: 0,
    timedOut: false,
    parserName: 'pytest',
    log: '',
    consolePasses: [{ id: 't.py::a', default: true, swebench: true, category: 'FAIL_TO_PASS' }],
    patchPaths: new Set(['pkg/mod.py']),
    testFiles: new Set(['t.py']),
    workdir: '/repo',
    ...extra,
  };
}

const kinds = (i: CrossCheckInput) => crossCheck(i).findings.map((f) => `${f.kind}${f.veto ? '!' : ''}`);

describe('crossCheck (pytest)', () => {
  it('a report that agrees with the console has no finding', () => {
    expect(kinds(input({ tests: { 't.py::a': ['PASSED'] } }))).toEqual([]);
  });

  it('a pass the report does not have, or has failing, refuses the pass', () => {
    expect(kinds(input({ tests: {} }))).toEqual(['console-disagrees!']);
    expect(kinds(input({ tests: { 't.py::a': ['PASSED', 'ERROR'] } }))).toEqual(['console-disagrees!']);
  });

  it('a pass only the SWE-bench rules grant is recorded without a veto', () => {
    const i = input(
      { tests: {} },
      { consolePasses: [{ id: 't.py::a', default: false, swebench: true, category: 'FAIL_TO_PASS' }] },
    );
    expect(kinds(i)).toEqual(['console-disagrees']);
  });

  it('a skipped PASS_TO_PASS test holds; a skipped FAIL_TO_PASS one does not', () => {
    const p2p = { id: 't.py::a', default: true, swebench: true, category: 'PASS_TO_PASS' };
    expect(kinds(input({ tests: { 't.py::a': ['SKIPPED'] } }, { consolePasses: [p2p] }))).toEqual([]);
    expect(kinds(input({ tests: { 't.py::a': ['SKIPPED'] } }))).toEqual(['console-disagrees!']);
  });

  it('started without a report, a stale secret, or no probe at all while pytest printed', () => {
    expect(kinds(input(undefined))).toEqual(['runner-report-missing!']);
    // Ended early with a failing exit code: a crash, recorded, refusing nothing the tests did not.
    expect(kinds(input(undefined, { exitCode: 4 }))).toEqual(['runner-report-missing']);
    expect(kinds(input({ nonce: 'guess' }))).toEqual(['runner-report-invalid!']);
    const none: CrossCheckInput = { ...input(undefined), files: {}, log: '==== test session starts ====\n' };
    expect(kinds(none)).toEqual(['runner-not-probed!']);
    // The command runs pytest: no probe is a finding even when the output looks like nothing pytest prints.
    expect(kinds({ ...none, log: 'ok 1 - t.py::a\n', parserName: 'tap' })).toEqual(['runner-not-probed!']);
    const notPytest = { ...armed, testCommand: './tests/runtests.py --verbosity 2' };
    expect(kinds({ ...none, armed: notPytest, log: 'ok\n', parserName: 'django' })).toEqual([]);
  });

  it('failures with exit code 0 refuse the pass; the other way round does not', () => {
    expect(kinds(input({ exitstatus: 1, tests: { 't.py::a': ['PASSED'] } }))).toEqual(['exit-code!']);
    expect(kinds(input({ exitstatus: 0, tests: { 't.py::a': ['PASSED'] } }, { exitCode: 1 }))).toEqual([]);
  });

  it('outcomes made better after pytest are tampering; a failure turned into a rerun is not', () => {
    const better = { id: 't.py::a', when: 'call', made: 'failed', logged: 'passed' };
    const rerun = { id: 't.py::a', when: 'call', made: 'failed', logged: 'rerun' };
    expect(kinds(input({ tests: { 't.py::a': ['PASSED'] }, rewritten: [better] }))).toEqual([
      'outcome-rewritten!',
    ]);
    expect(kinds(input({ tests: { 't.py::a': ['PASSED'] }, rewritten: [rerun] }))).toEqual([]);
  });

  it('pytest internals replaced from the repository or from nowhere refuse; an installed plugin is a note', () => {
    const fromRepo = {
      name: '_pytest.reports.TestReport.__init__',
      file: '/repo/pkg/mod.py',
      file_exists: true,
    };
    const fromExec = { name: '_pytest.runner.call_and_report', file: '<string>', file_exists: false };
    const installed = {
      name: '_pytest.fixtures.FixtureFunctionMarker.__call__',
      file: '/usr/lib/x/plugin.py',
      file_exists: true,
    };
    const result = crossCheck(
      input({ tests: { 't.py::a': ['PASSED'] }, internals_changed: [fromRepo, fromExec, installed] }),
    );
    expect(result.findings.map((f) => f.kind)).toEqual(['runner-internals']);
    expect(result.findings[0]?.paths).toEqual(['pkg/mod.py', '<string>']);
    expect(result.notes.join(' ')).toContain('/usr/lib/x/plugin.py');
  });

  it('a test calling code of a patched file, or a plain test calling other code, refuses; a decorated one is a note', () => {
    const pass = { 't.py::a': ['PASSED'] };
    const origin = (o: Record<string, unknown>) => ({ id: 't.py::a', test_file: '/repo/t.py', ...o });
    // The package the patch changed supplies the code of a decorated test: swapped.
    const fromPatch = origin({ file: '/repo/pkg/mod.py', line: 3, file_exists: true, plain_def: false });
    expect(kinds(input({ tests: pass, test_origins: [fromPatch] }))).toEqual(['test-replaced!']);
    // A decorator from the standard library on a decorated test: allowed, noted.
    const mock = origin({
      file: '/usr/lib/python3.11/unittest/mock.py',
      line: 1,
      file_exists: true,
      plain_def: false,
    });
    const decorated = crossCheck(input({ tests: pass, test_origins: [mock] }));
    expect(decorated.findings).toEqual([]);
    expect(decorated.notes.join('\n')).toMatch(
      /t\.py::a \(runs \/usr\/lib\/python3\.11\/unittest\/mock\.py:1\)/,
    );
    // The same code, or no Python code at all, for a test defined with no decorators: swapped.
    expect(kinds(input({ tests: pass, test_origins: [{ ...mock, plain_def: true }] }))).toEqual([
      'test-replaced!',
    ]);
    const builtin = origin({ file: null, line: null, file_exists: false, plain_def: true });
    expect(kinds(input({ tests: pass, test_origins: [builtin] }))).toEqual(['test-replaced!']);
    // ... unless a loaded plugin's package supplies it; a test made by assignment (no def) is a note.
    const plugin = { name: 'asyncio', file: '/site/pytest_asyncio/__init__.py' };
    const wrapped = { ...builtin, file: '/site/pytest_asyncio/plugin.py', file_exists: true };
    expect(kinds(input({ tests: pass, test_origins: [wrapped], plugins: [plugin] }))).toEqual([]);
    expect(kinds(input({ tests: pass, test_origins: [{ ...builtin, plain_def: null }] }))).toEqual([]);
    // A test file the test patch touches may hold shared test code.
    const shared = origin({ file: '/repo/t.py', line: 9, file_exists: true, plain_def: false });
    expect(kinds(input({ tests: pass, test_origins: [shared] }, { patchPaths: new Set(['t.py']) }))).toEqual(
      [],
    );
  });

  it('a profile function of patched code is recorded without a veto; a C tracer (coverage) is a note', () => {
    const pass = { 't.py::a': ['PASSED'] };
    const profile = { kind: 'profile', file: '/repo/pkg/mod.py', file_exists: true };
    expect(kinds(input({ tests: pass, trace_hooks: [profile] }))).toEqual(['trace-hook']);
    const c = crossCheck(
      input({ tests: pass, trace_hooks: [{ kind: 'trace', file: null, file_exists: false }] }),
    );
    expect(c.findings).toEqual([]);
    expect(c.notes.join('\n')).toMatch(/trace function of C code active at collection/);
  });

  it('a skip or xfail raised by code the patch changed refuses; one raised by the test file does not', () => {
    const fromPackage = { id: 't.py::a', when: 'call', kind: 'xfail', file: '/repo/pkg/mod.py', line: 3 };
    const fromTest = { id: 't.py::a', when: 'call', kind: 'skip', file: '/repo/t.py', line: 9 };
    expect(kinds(input({ tests: { 't.py::a': ['XFAIL'] }, skip_origins: [fromPackage] }))).toEqual([
      'skip-origin!',
    ]);
    expect(kinds(input({ tests: { 't.py::a': ['XFAIL'] }, skip_origins: [fromTest] }))).toEqual([]);
  });
});
