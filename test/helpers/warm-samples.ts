/**
 * Samples for the warm-worker tests (test/functional/js-warm-worker*.test.ts,
 * python-worker-hardening.test.ts, warm-worker-protocol.test.ts): one JavaScript and one Python
 * problem whose right answer is `f() == 1`, and a batch run of completions through the real executor.
 */
import { findExecutor } from '../../src/functional/executors/index.ts';
import { DEFAULT_SANDBOX } from '../../src/functional/sandbox.ts';
import type { ExecutionResult, Problem } from '../../src/functional/types.ts';

/** MBJSP-like: lodash's isEqual checks `f()` against 1. */
export const JS_PROBLEM: Problem = {
  task_id: 'MBJSP/0',
  prompt: 'function f() {\n',
  entry_point: 'f',
  test: '\nconst _ = require("lodash");\nif (!_.isEqual(f(), 1)) { throw new Error("f() is not 1"); }\n',
  language: 'javascript',
  canonical_solution: '  return 1;\n}\n',
  has_canonical_solution: true,
  raw: {},
};

/** HumanEval-like: `check` asserts `candidate() == 1`. */
export const PY_PROBLEM: Problem = {
  task_id: 'T/0',
  prompt: 'def f():\n',
  entry_point: 'f',
  test: '\ndef check(candidate):\n    assert candidate() == 1\n',
  language: 'python',
  canonical_solution: '    return 1\n',
  has_canonical_solution: true,
  raw: {},
};

/** Runs `completions` of `problem` in order in one slot (one worker); timeout in seconds, memory in bytes. */
export async function runSamples(
  problem: Problem,
  completions: string[],
  timeoutSec: number,
  memoryBytes: number,
): Promise<ExecutionResult[]> {
  return findExecutor(problem.language)!.runBatch(
    completions.map((completion, index) => ({
      problem,
      sample: { task_id: problem.task_id, completion, index },
    })),
    { timeoutSec, workers: 1, sandbox: { ...DEFAULT_SANDBOX, memoryBytes } },
  );
}
