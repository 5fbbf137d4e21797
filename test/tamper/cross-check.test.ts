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

  it('a skip or xfail raised by code the patch changed refuses; one raised by the test file does not', () => {
    const fromPackage = { id: 't.py::a', when: 'call', kind: 'xfail', file: '/repo/pkg/mod.py', line: 3 };
    const fromTest = { id: 't.py::a', when: 'call', kind: 'skip', file: '/repo/t.py', line: 9 };
    expect(kinds(input({ tests: { 't.py::a': ['XFAIL'] }, skip_origins: [fromPackage] }))).toEqual([
      'skip-origin!',
    ]);
    expect(kinds(input({ tests: { 't.py::a': ['XFAIL'] }, skip_origins: [fromTest] }))).toEqual([]);
  });
});
