/**
 * A module the problem itself needs (its prompt or tests import it) that is not installed is an
 * error of the run, for every language and wherever the import stands, never a test failure; a
 * module only the completion imports stays that sample's failure (issue 12). Real toolchains,
 * real sandbox; a language whose toolchain is absent here is skipped with its name.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSamples, evaluate, RunError } from '../../src/functional/evaluate.ts';
import { readProblems } from '../../src/functional/formats.ts';
import { findJdk, findKotlin } from '../../src/functional/jvm/toolchain.ts';
import { missingDependency } from '../../src/functional/missing-dependency.ts';
import { detectSandbox } from '../../src/functional/sandbox.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-missing-dep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sandboxed = detectSandbox().kind !== 'none';
const has = (cmd: string, ...args: string[]) =>
  spawnSync(cmd, args.length ? args : ['--version']).status === 0;

interface Case {
  language: string;
  tool: () => boolean;
  prompt: string;
  solution: string;
  test: string;
  /** What the completion imports in the negative case (not installed either). */
  ownImport: string;
}

const jvm = await Promise.all([findJdk(), findKotlin()]).then(
  () => true,
  () => false,
);

const CASES: Record<string, Case> = {
  kotlin: {
    language: 'kotlin',
    tool: () => jvm,
    prompt: 'import kotlin.math.abs\nimport berth.nosuch.Thing\nfun f(): Int {\n',
    solution: '    return abs(-1)\n}\n',
    test: '\nfun main() { if (f() != 1) throw Exception("wrong") }\n',
    ownImport: '',
  },
  java: {
    language: 'java',
    tool: () => jvm,
    prompt: 'import java.util.*; import berth.nosuch.Thing;\nclass F {\n    static int f() {\n',
    solution: '        return 1;\n    }\n}\n',
    test: '\nclass Main { public static void main(String[] a) throws Exception { if (F.f() != 1) throw new Exception("wrong"); } }\n',
    ownImport: '',
  },
  // The module is required in the prompt (mxeval's check looked only at the tests).
  javascript: {
    language: 'javascript',
    tool: () => true,
    prompt: 'const x = 1; const dep = require("berth-no-such-module");\nfunction f() {\n',
    solution: '  return 1;\n}\n',
    test: '\nif (f() !== 1) throw new Error("wrong");\n',
    ownImport: '  const own = require("berth-own-missing");\n',
  },
  typescript: {
    language: 'typescript',
    tool: () => true,
    prompt: 'import * as dep from "berth-no-such-module";\nconst used = dep;\nfunction f(): number {\n',
    solution: '  return 1;\n}\n',
    test: '\nif (f() !== 1) { throw new Error("wrong"); }\n',
    ownImport: '  const own = require("berth-own-missing");\n',
  },
  // Python: the second module of one import statement, inside the function.
  python: {
    language: 'python',
    tool: () => true,
    prompt: 'def f():\n    import os, berth_no_such_module\n',
    solution: '    return 1\n',
    test: '\ndef check(candidate):\n    assert candidate() == 1\n',
    ownImport: '    import berth_own_missing\n',
  },
  go: {
    language: 'go',
    tool: () => has('go', 'version'),
    prompt:
      'package main\n\nimport (\n\t"fmt"\n\t"berth.example/nosuchmodule"\n)\n\nvar _ = nosuchmodule.X\n\nfunc f() int {\n',
    solution: '\treturn 1\n}\n',
    test: '\nfunc main() {\n\tif f() != 1 {\n\t\tpanic(fmt.Sprint("wrong"))\n\t}\n}\n',
    ownImport: '',
  },
  ruby: {
    language: 'ruby',
    tool: () => has('ruby'),
    prompt: "x = 1; require 'berth_no_such_module'\ndef f\n",
    solution: '  1\nend\n',
    test: '\nraise "wrong" unless f == 1\n',
    ownImport: "  require 'berth_own_missing'\n",
  },
  php: {
    language: 'php',
    tool: () => has('php'),
    prompt: "<?php\nrequire_once 'berth_no_such_module.php';\nfunction f() {\n",
    solution: '  return 1;\n}\n',
    test: '\nif (f() != 1) { throw new Exception("wrong"); }\n',
    ownImport: "  require 'berth_own_missing.php';\n",
  },
  perl: {
    language: 'perl',
    tool: () => has('perl', '-v'),
    prompt: 'my $x = 1; use Berth::NoSuchModule;\nsub f {\n',
    solution: '  return 1;\n}\n',
    test: '\ndie "wrong" unless f() == 1;\n',
    ownImport: '  require Berth::OwnMissing;\n',
  },
  scala: {
    language: 'scala',
    tool: () => has('scalac', '-version'),
    prompt: 'import scala.math._\nimport berth.nosuch.Thing\nobject F {\n  def f(): Int = {\n',
    solution: '    1\n  }\n}\n',
    test: '\nobject Main { def main(args: Array[String]): Unit = { if (F.f() != 1) throw new Exception("wrong") } }\n',
    ownImport: '',
  },
  cpp: {
    language: 'cpp',
    tool: () => has('g++'),
    prompt: '#include <cstdio>\n#include <berth_no_such_module.h>\nint f() {\n',
    solution: '  return 1;\n}\n',
    test: '\nint main() { if (f() != 1) throw 1; return 0; }\n',
    ownImport: '',
  },
};

async function run(name: string, problem: Record<string, string>): Promise<unknown> {
  const problemsFile = join(dir, `${name}.jsonl`);
  writeFileSync(problemsFile, `${JSON.stringify({ task_id: `${name}/1`, entry_point: 'f', ...problem })}\n`);
  const problems = await readProblems(problemsFile);
  const { samples } = agentSamples(problems, 'oracle');
  return evaluate({
    problemsFile,
    problems,
    samples,
    samplesFile: join(dir, `${name}-s.jsonl`),
    timeoutSec: 30,
    workers: 1,
  });
}

describe.skipIf(!sandboxed)('a dependency the problem needs, not installed: an error of the run', () => {
  for (const [name, c] of Object.entries(CASES)) {
    it(`${name}: the run is refused naming the module`, async (ctx) => {
      if (!c.tool()) ctx.skip(`${name}'s toolchain is not installed here`);
      const out = run(name, {
        language: c.language,
        prompt: c.prompt,
        canonical_solution: c.solution,
        test: c.test,
      });
      await expect(out).rejects.toThrow(RunError);
      await expect(out).rejects.toThrow(
        /the problem needs "(?:berth[-_.a-zA-Z/:]*)", which is not installed/i,
      );
    }, 120_000);
  }

  it('a module only the completion imports is that sample failing, not an error of the run', async () => {
    for (const name of ['javascript', 'python', 'ruby']) {
      const c = CASES[name] as Case;
      if (!c.tool()) continue;
      const summary = (await run(`${name}-own`, {
        language: c.language,
        // The problem imports an installed module instead.
        prompt: c.prompt.replace(
          /berth_no_such_module|berth-no-such-module/,
          name === 'javascript' ? 'fs' : 'json',
        ),
        canonical_solution: c.ownImport + c.solution,
        test: c.test,
      })) as { passed: number; failures: Record<string, number> };
      expect(summary.passed, name).toBe(0);
      expect(summary.failures.error_of_run ?? 0, name).toBe(0);
    }
  }, 120_000);
});

describe('missingDependency: what each toolchain says, matched to the problem text', () => {
  const p = (prompt: string, test = '') => ({ prompt, test });
  it('reads each language message and finds the import wherever it stands', () => {
    expect(
      missingDependency(
        'kotlin',
        "Main.kt:1:20: error: unresolved reference 'berth'.\npackage s0; import berth.missing.Thing\n",
        p('import berth.missing.Thing\nfun f() {'),
      ),
    ).toMatch(/"berth"/);
    // An unresolved name in the completion's body is its own compile error.
    expect(
      missingDependency(
        'kotlin',
        "Main.kt:2:12: error: unresolved reference 'max'.\n    return max(a)\n",
        p('import kotlin.math.max\nfun f() {'),
      ),
    ).toBeUndefined();
    expect(
      missingDependency(
        'java',
        'main.java:1: error: package berth.missing does not exist\n',
        p('import berth.missing.Thing;\nclass A {'),
      ),
    ).toMatch(/berth\.missing/);
    expect(
      missingDependency(
        'swift',
        "error: no such module 'BerthKit'",
        p('import Foundation\nimport BerthKit\n'),
      ),
    ).toMatch(/BerthKit/);
    expect(
      missingDependency(
        'scala',
        'error: object missing is not a member of package berth',
        p('import berth.missing.Thing\n'),
      ),
    ).toMatch(/missing/);
    expect(
      missingDependency('python', "failed: No module named 'np_x.sub'", p('x = 1; from np_x.sub import y\n')),
    ).toMatch(/np_x/);
    expect(
      missingDependency('python', "failed: No module named 'np_x'", p('def f():\n', 'import np_y\n')),
    ).toBeUndefined();
    expect(
      missingDependency(
        'typescript',
        "error TS2307: Cannot find module 'dep-x' or its corresponding type declarations.",
        p("import x = require('dep-x');\n"),
      ),
    ).toMatch(/dep-x/);
  });
});
