/**
 * `berth eval` on real problem files (read from BERTH_DATA, default
 * ../shared/data next to the repository) and on small hand-made ones.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSamples, evaluate, RunError } from '../../src/functional/evaluate.ts';
import { readProblems } from '../../src/functional/formats.ts';
import { detectSandbox } from '../../src/functional/sandbox.ts';

const root = resolve(import.meta.dirname, '..', '..');
const data = resolve(root, process.env.BERTH_DATA ?? '../shared/data');
const humaneval = join(data, 'functional', 'humaneval', 'HumanEval.jsonl.gz');
const mbxp = join(data, 'functional', 'mbxp');
const dir = mkdtempSync(join(tmpdir(), 'berth-eval-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sandboxed = detectSandbox().kind !== 'none';

function berth(args: string[]) {
  return spawnSync(process.execPath, [join(root, 'bin', 'berth.js'), ...args], {
    encoding: 'utf8',
    cwd: dir,
    timeout: 120_000,
  });
}

describe.skipIf(!existsSync(humaneval) || !sandboxed)(`HumanEval (from ${humaneval})`, () => {
  it('oracle: 164/164 canonical solutions pass; output ends with pass@1', () => {
    const out = berth([
      'eval',
      '--problems',
      humaneval,
      '-a',
      'oracle',
      '--out',
      join(dir, 'oracle.jsonl'),
      '--timeout',
      '3',
    ]);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('164 samples, 164 passed');
    expect(out.stdout.trim().split('\n').at(-1)).toBe('pass@1: 100.00%');
    const rows = readFileSync(join(dir, 'oracle.jsonl_results.jsonl'), 'utf8').trim().split('\n');
    expect(rows).toHaveLength(164);
    const summary = JSON.parse(readFileSync(join(dir, 'oracle.jsonl_berth.json'), 'utf8'));
    expect(summary).toMatchObject({ tasks: 164, passed: 164, pass_at_k: { 'pass@1': 1 } });
  });

  it('nop: 0/164 empty completions pass; --json is one document on stdout, the human lines on stderr', () => {
    const out = berth([
      'eval',
      '--problems',
      humaneval,
      '-a',
      'nop',
      '--out',
      join(dir, 'nop.jsonl'),
      '--json',
    ]);
    expect(out.status, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout);
    expect(summary).toMatchObject({ samples: 164, passed: 0, pass_at_k: { 'pass@1': 0 } });
    // As `berth run --json`: the human summary is not lost, it goes to stderr.
    expect(out.stderr).toContain('164 samples, 0 passed');
    expect(out.stderr.trim().split('\n').at(-1)).toBe('pass@1: 0.00%');
  });

  it('refuses a k above the samples per task (exit 2) and writes nothing misleading', () => {
    const out = berth([
      'eval',
      '--problems',
      humaneval,
      '-a',
      'oracle',
      '--out',
      join(dir, 'k.jsonl'),
      '--pass-at',
      '1,10',
    ]);
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/pass@10 cannot be estimated: the task with the fewest samples has 1/);
  });
});

describe.skipIf(!existsSync(join(mbxp, 'mbpp_samples.jsonl')) || !sandboxed)('MBPP example samples', () => {
  it('pass@1 82.14% on this machine, as mxeval itself gives here (published: 82.24%)', async () => {
    const samplesFile = join(dir, 'mbpp_samples.jsonl');
    writeFileSync(samplesFile, readFileSync(join(mbxp, 'mbpp_samples.jsonl')));
    const summary = await evaluate({
      problemsFile: join(mbxp, 'mbpp_release_v1.jsonl'),
      samplesFile,
      timeoutSec: 15,
      workers: 2,
    });
    expect(summary.samples).toBe(974);
    expect(summary.passed).toBe(800);
  });
});

describe.skipIf(!existsSync(join(mbxp, 'mbjsp_release_v1.2.jsonl')) || !sandboxed)(
  'MBJSP (JavaScript, lodash)',
  () => {
    it('the first 40 canonical solutions run with lodash available', async () => {
      const problemsFile = join(mbxp, 'mbjsp_release_v1.2.jsonl');
      const all = await readProblems(problemsFile);
      const problems = new Map([...all].slice(0, 40));
      const { samples } = agentSamples(problems, 'oracle');
      const summary = await evaluate({
        problemsFile,
        problems,
        samples,
        samplesFile: join(dir, 'mbjsp.jsonl'),
        timeoutSec: 15,
        workers: 2,
      });
      // Every test requires lodash; without it each sample would be an error of the run and evaluate would throw.
      expect(summary.failures.error_of_run ?? 0).toBe(0);
      expect(summary.passed).toBeGreaterThan(30);
    });
  },
);

describe.skipIf(!sandboxed)('errors of the run are refused, never verdicts', () => {
  it('a JavaScript test that needs a module that is not installed', async () => {
    const problemsFile = join(dir, 'needs-module.jsonl');
    writeFileSync(
      problemsFile,
      `${JSON.stringify({
        task_id: 'X/1',
        language: 'javascript',
        prompt: 'function f() {\n',
        entry_point: 'f',
        canonical_solution: '  return 1;\n}\n',
        test: '\nconst m = require("berth-no-such-module");\nif (f() !== 1) throw new Error("wrong");\n',
      })}\n`,
    );
    const problems = await readProblems(problemsFile);
    const { samples } = agentSamples(problems, 'oracle');
    await expect(
      evaluate({
        problemsFile,
        problems,
        samples,
        samplesFile: join(dir, 'needs.jsonl'),
        timeoutSec: 5,
        workers: 1,
      }),
    ).rejects.toThrow(RunError);
    expect(existsSync(join(dir, 'needs.jsonl_results.jsonl'))).toBe(false);
  });

  it('a Python problem that imports a module that is not installed', async () => {
    const problemsFile = join(dir, 'py-needs-module.jsonl');
    writeFileSync(
      problemsFile,
      `${JSON.stringify({
        task_id: 'P/1',
        prompt: 'import berth_no_such_module\n\ndef f():\n',
        entry_point: 'f',
        canonical_solution: '    return 1\n',
        test: '\ndef check(candidate):\n    assert candidate() == 1\n',
      })}\n`,
    );
    const problems = await readProblems(problemsFile);
    const { samples } = agentSamples(problems, 'oracle');
    await expect(
      evaluate({
        problemsFile,
        problems,
        samples,
        samplesFile: join(dir, 'py-needs.jsonl'),
        timeoutSec: 5,
        workers: 1,
      }),
    ).rejects.toThrow(/the problem needs "berth_no_such_module", which is not installed/);
  });

  it('a language without a toolchain says what to install (exit 2)', () => {
    const problemsFile = join(dir, 'swift.jsonl');
    writeFileSync(
      problemsFile,
      `${JSON.stringify({ task_id: 'MBSWP/1', language: 'swift', prompt: 'func f() -> Int {\n', entry_point: 'f', canonical_solution: '  return 1\n}\n', test: '\nassert(f() == 1)\n' })}\n`,
    );
    const out = berth([
      'eval',
      '--problems',
      problemsFile,
      '-a',
      'oracle',
      '--out',
      join(dir, 'swift-samples.jsonl'),
    ]);
    if (spawnSync('swift', ['--version']).status === 0) return; // installed here: nothing to refuse
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/swift.*install Swift/);
  });
});

describe.skipIf(!sandboxed)('compiled languages tell compile errors from test failures', () => {
  const cases: [string, string, string, string][] = [
    [
      'cpp',
      '#include <cassert>\nint f() {\n',
      '\nint main() { if (f() != 1) throw 1; return 0; }\n',
      '  return 1;\n}\n',
    ],
    [
      'go',
      'package main\n\nfunc f() int {\n',
      '\nfunc main() { if f() != 1 { panic("wrong") } }\n',
      '\treturn 1\n}\n',
    ],
    [
      'typescript',
      'function f(): number {\n',
      '\nif (f() !== 1) { throw new Error("wrong"); }\n',
      '  return 1;\n}\n',
    ],
    ['ruby', 'def f\n', '\nraise StandardError, "wrong" unless f == 1\n', '  1\nend\n'],
    [
      'php',
      '<?php\nfunction f() {\n',
      '\nif (f() !== 1) { throw new Exception("wrong"); }\n',
      '  return 1;\n}\n',
    ],
    ['perl', 'use Data::Compare;\nsub f {\n', '\ndie "wrong" unless f() == 1;\n', '  return 1;\n}\n'],
    // MBSCP's shape: an `object Main extends App` whose body holds the function and the asserts.
    [
      'scala',
      'object Main extends App {\n  def f(): Int = {\n',
      '\n  assert(f() == 1, "wrong")\n}\n',
      '    1\n  }\n',
    ],
  ];
  for (const [language, prompt, test, right] of cases) {
    it(`${language}: right, wrong, and broken samples`, async (context) => {
      const { findExecutor } = await import('../../src/functional/executors/index.ts');
      const executor = findExecutor(language)!;
      if (!(await executor.checkToolchain()).ok) context.skip();
      const problemsFile = join(dir, `${language}.jsonl`);
      writeFileSync(
        problemsFile,
        `${JSON.stringify({ task_id: `${language}/1`, language, prompt, entry_point: 'f', canonical_solution: right, test })}\n`,
      );
      const samplesFile = join(dir, `${language}-samples.jsonl`);
      const wrong = right.replace('1', '2');
      const broken = language === 'ruby' ? '  1 +\nend end\n' : `${right.slice(0, -2)} ((( \n`;
      writeFileSync(
        samplesFile,
        [right, wrong, broken]
          .map((completion) => JSON.stringify({ task_id: `${language}/1`, completion, language }))
          .join('\n'),
      );
      await evaluate({ problemsFile, samplesFile, timeoutSec: 10, workers: 2 });
      const rows = readFileSync(`${samplesFile}_results.jsonl`, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(rows.map((row) => row.passed)).toEqual([true, false, false]);
      expect(rows[1].failure_kind).toBe('test_failure');
      expect(rows[2].failure_kind).toBe('compile_error');
    });
  }
});
