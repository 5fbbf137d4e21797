/**
 * Executors that write the assembled program to a file in a fresh folder and
 * run the language's tools on it in the sandbox, one sample at a time per
 * slot: JavaScript, TypeScript, Go, Ruby, PHP, C++, Perl, Scala, Swift, C#.
 *
 * Commands follow mxeval's `mxeval/execution.py` (read at e09974f), with
 * these deliberate differences, each recorded in docs/function-level.md:
 * - Go: `go build` then the binary instead of `go run`, so compile errors are
 *   told apart; the compile gets the compile timeout (mxeval counts it
 *   against the run timeout).
 * - TypeScript: compiled when tsc emitted the JavaScript file (mxeval tests
 *   exit code 2, which breaks when tsc exits 0, amazon-science/mxeval#20).
 * - Scala: the run is skipped after a failed compile (mxeval runs it anyway).
 *
 * Pass = compile success (where there is a compile step) and run exit code 0.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { limitsHit } from '../../sandbox/limits.ts';
import { assembleProgram } from '../assemble.ts';
import { DependencyConfirmation, missingDependency, withMissingDependency } from '../missing-dependency.ts';
import {
  DEFAULT_IMAGE,
  detectSandbox,
  dirInside,
  makeSampleDir,
  removeDir,
  runSandboxed,
  SANDBOX_DIR,
  type SandboxRunResult,
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
import {
  type IsolateSetup,
  isolateSetup,
  isolateStats,
  runOnIsolate,
  startIsolateWorker,
} from './js-isolates.ts';
import {
  buildNodeSnapshot,
  type NodeSnapshot,
  PROBE_OK,
  probeProgram,
  removeNodeSnapshot,
  SNAPSHOT_DIR_INSIDE,
  snapshotsEnabled,
  withSnapshot,
} from './node-snapshot.ts';
import { WarmWorker } from './warm-worker.ts';

/** Compile steps get this wall-clock limit in seconds (mxeval's `compile_timeout`). */
export const COMPILE_TIMEOUT_SEC = 100;

const require = createRequire(import.meta.url);

/** The folder holding a resolvable npm package, or undefined. */
function packageDir(name: string): string | undefined {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/** Where a language's commands find their files inside the sandbox. */
interface Context {
  /** The sample folder as the program sees it. */
  dir: string;
}

interface LanguageSpec {
  language: string;
  aliases: string[];
  /** File name of the assembled program in the sample folder. */
  file: string;
  /** Command that prints the toolchain version; exit 0 means installed. */
  version: string[];
  /** What to install when `version` fails. */
  install: string;
  compile?: (ctx: Context) => string[];
  /** After a compile step: did it produce something runnable? Default: exit code 0. */
  compiled?: (run: SandboxRunResult, hostDir: string) => boolean;
  run: (ctx: Context) => string[];
  env?: (ctx: Context) => Record<string, string>;
  /** Host paths the tools need read-only inside the sandbox. */
  readOnlyPaths?: () => string[];
  /** Extra toolchain check (a dependency the tests need), returning a message when missing. */
  checkExtra?: () => string | undefined;
  /** Run-step stderr that shows the program did not even parse (a compile error of interpreted languages). */
  syntaxError?: RegExp;
  /** Compile output that shows a syntax error although the compiler still emitted code (tsc): a failed run is then a compile error. */
  compileSyntaxError?: RegExp;
  /**
   * Run in a warm worker per slot under bwrap (warm-worker.ts): the sandbox is set up once and the
   * run step is forked in it per sample, in its folder `/sample` emptied before and after. Only for
   * languages without a compile step.
   */
  warm?: boolean;
  /**
   * Warm workers only: a package every test requires, preloaded in a node start-up snapshot that
   * each sample's `node` starts from (node-snapshot.ts).
   */
  preload?: string;
  /**
   * Warm workers only: samples try the fast path first (js-isolates.ts: many samples per worker,
   * each in a fresh V8 context); only a pass there stands, anything else runs the run step as usual.
   */
  isolates?: boolean;
}

const lodashDir = () => packageDir('lodash');
const typescriptDir = () => packageDir('typescript');

/** NODE_PATH entries for the sandbox: the folder that holds lodash (as mxeval installs it globally). */
function nodePath(): string {
  const dir = lodashDir();
  return dir ? dirname(dir) : '';
}

export const LANGUAGES: LanguageSpec[] = [
  {
    language: 'javascript',
    aliases: ['js', 'node'],
    file: 'main.js',
    version: ['node', '--version'],
    install: 'Node.js 20 (Debian package nodejs)',
    run: ({ dir }) => ['node', join(dir, 'main.js')],
    env: () => ({ NODE_PATH: nodePath() }),
    readOnlyPaths: () => [lodashDir()].filter((path): path is string => path !== undefined),
    checkExtra: () =>
      lodashDir()
        ? undefined
        : 'lodash is missing (the MBJSP tests require("lodash")): run npm ci in the berth folder',
    syntaxError: /^SyntaxError: /m,
    warm: true,
    preload: 'lodash',
    isolates: true,
  },
  {
    language: 'typescript',
    aliases: ['ts'],
    file: 'main.ts',
    version: ['node', '--version'],
    install: 'Node.js 20 (Debian package nodejs)',
    // mxeval: npx tsc <base> --target es5 --lib es2016 (the path without .ts)
    compile: ({ dir }) => [
      'node',
      join(typescriptDir() ?? '', 'bin', 'tsc'),
      join(dir, 'main'),
      '--target',
      'es5',
      '--lib',
      'es2016',
    ],
    compiled: (run, hostDir) =>
      (run.exitCode === 0 || run.exitCode === 2) && existsSync(join(hostDir, 'main.js')),
    compileSyntaxError: /error TS1\d{3}:/,
    run: ({ dir }) => ['node', join(dir, 'main.js')],
    env: () => ({ NODE_PATH: nodePath() }),
    readOnlyPaths: () => [lodashDir(), typescriptDir()].filter((path): path is string => path !== undefined),
    checkExtra: () => (typescriptDir() ? undefined : 'typescript is missing: run npm ci in the berth folder'),
  },
  {
    language: 'go',
    aliases: ['golang'],
    file: 'main.go',
    version: ['go', 'version'],
    install: 'Go (Debian package golang-go)',
    compile: ({ dir }) => ['go', 'build', '-o', join(dir, 'main_go'), join(dir, 'main.go')],
    run: ({ dir }) => [join(dir, 'main_go')],
    env: ({ dir }) => ({
      GOCACHE: join(dir, '.gocache'),
      GOPATH: join(dir, '.gopath'),
      GO111MODULE: 'off',
      GOPROXY: 'off',
      GOFLAGS: '',
      CGO_ENABLED: '0',
    }),
  },
  {
    language: 'ruby',
    aliases: ['rb'],
    file: 'main.rb',
    version: ['ruby', '--version'],
    install: 'Ruby (Debian package ruby)',
    run: ({ dir }) => ['ruby', join(dir, 'main.rb')],
    syntaxError: /syntax error/,
  },
  {
    language: 'php',
    aliases: [],
    file: 'main.php',
    version: ['php', '--version'],
    install: 'PHP (Debian package php-cli)',
    run: ({ dir }) => ['php', join(dir, 'main.php')],
    syntaxError: /PHP Parse error|Parse error: syntax error/,
  },
  {
    language: 'cpp',
    aliases: ['c++', 'cxx'],
    file: 'main.cpp',
    version: ['g++', '--version'],
    install: 'g++ (Debian package g++)',
    // mxeval: g++ <name>.cpp -o <name>_cpp (no -std flag)
    compile: ({ dir }) => ['g++', join(dir, 'main.cpp'), '-o', join(dir, 'main_cpp')],
    run: ({ dir }) => [join(dir, 'main_cpp')],
  },
  {
    language: 'perl',
    aliases: ['pl'],
    file: 'main.pl',
    version: ['perl', '-MData::Compare', '-e', 'print $^V'],
    install: 'Perl with Data::Compare (Debian packages perl libdata-compare-perl)',
    run: ({ dir }) => ['perl', join(dir, 'main.pl')],
    syntaxError: /syntax error at /,
  },
  {
    language: 'scala',
    aliases: [],
    file: 'main.scala',
    version: ['scalac', '-version'],
    install: 'Scala (Debian package scala)',
    compile: ({ dir }) => ['scalac', join(dir, 'main.scala'), '-d', dir],
    run: ({ dir }) => ['scala', '-cp', dir, 'Main'],
  },
  {
    language: 'swift',
    aliases: [],
    file: 'main.swift',
    version: ['swift', '--version'],
    install: 'Swift 5.7 (swift.org toolchain; no Debian package)',
    run: ({ dir }) => ['swift', join(dir, 'main.swift')],
  },
  {
    language: 'csharp',
    aliases: ['cs', 'c#'],
    file: 'Program.cs',
    version: ['dotnet', '--version'],
    install: ".NET 6 SDK and mxeval's eval_csproj template (not packaged for Debian)",
    run: () => ['false'],
    checkExtra: () => "C# needs mxeval's eval_csproj project template, which berth does not ship yet",
  },
];

function tail(text: string, max = 2000): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `…${trimmed.slice(-max)}` : trimmed;
}

/**
 * bwrap / unshare / prlimit / the cgroup step themselves failed (a path to bind is unreadable,
 * namespaces refused...): the command never started. Told by the start mark (sandbox.ts
 * `markStart`), never by what the output says: a sample may print `bwrap: ...` itself.
 */
function sandboxFailed(run: SandboxRunResult): boolean {
  return run.started === false;
}

function classifyCrash(run: SandboxRunResult): string | undefined {
  const text = run.stderr;
  if (run.limitsHit.includes('memory')) return 'memory limit reached';
  if (
    /MemoryError|out of memory|bad_alloc|Cannot allocate memory|heap out of memory|failed to reserve memory/i.test(
      text,
    )
  ) {
    return 'memory limit reached';
  }
  // An uncaught C++ exception (how mxeval's C++ tests fail) ends in abort(): a test failure, not a crash.
  if (run.signal === 'SIGABRT' || run.exitCode === 134) return undefined;
  if (run.signal && run.signal !== 'SIGXCPU') return `killed by signal ${run.signal}`;
  if (run.exitCode !== null && run.exitCode > 128 && run.exitCode < 160)
    return `killed by signal ${run.exitCode - 128}`;
  if (run.limitsHit.includes('processes') || /Resource temporarily unavailable|fork: retry|EAGAIN/.test(text))
    return 'process limit reached';
  return undefined;
}

type Fail = (kind: FailureKind, detail: string, output?: string) => ExecutionResult;
type Base = () => Pick<ExecutionResult, 'time_elapsed' | 'sandbox' | 'warning'>;

/** A sample's result fields (time since `started`, sandbox, warning) and its failures. */
function outcomes(
  started: number,
  sandbox: SandboxKind,
  warning: string | undefined,
): { base: Base; fail: Fail } {
  const base = () => ({
    time_elapsed: (performance.now() - started) / 1000,
    sandbox,
    ...(warning ? { warning } : {}),
  });
  const fail: Fail = (kind, detail, output) => ({
    passed: false,
    result: kind === 'timeout' ? 'timed out' : `failed: ${detail}`,
    kind,
    ...base(),
    ...(output !== undefined ? { output } : {}),
  });
  return { base, fail };
}

async function runOne(
  spec: LanguageSpec,
  item: ExecutionItem,
  slot: number,
  options: RunBatchOptions,
): Promise<ExecutionResult> {
  const started = performance.now();
  const hostDir = await makeSampleDir(slot, spec.language);
  const { kind: sandbox, warning } = detectSandbox(options.sandbox.kind);
  const ctx: Context = { dir: dirInside(sandbox, hostDir) };
  const { base, fail } = outcomes(started, sandbox, warning);
  try {
    const program = assembleProgram(item.problem, item.sample.completion, spec.language);
    await writeFile(join(hostDir, spec.file), program);
    const common = {
      workDir: hostDir,
      env: spec.env?.(ctx) ?? {},
      readOnlyPaths: spec.readOnlyPaths?.() ?? [],
      slot,
      options: options.sandbox,
      ...(options.signal ? { signal: options.signal } : {}),
      markStart: true,
    };
    let compileOutput = '';
    if (spec.compile) {
      const compile = await runSandboxed({
        ...common,
        argv: spec.compile(ctx),
        timeoutSec: COMPILE_TIMEOUT_SEC,
        cpuSec: COMPILE_TIMEOUT_SEC,
      });
      const output = `${compile.stdout}${compile.stderr}`;
      compileOutput = output;
      if (compile.spawnError) return fail('error_of_run', `sandbox could not start: ${compile.spawnError}`);
      if (sandboxFailed(compile))
        return fail('error_of_run', `sandbox could not start: ${tail(compile.stderr, 500)}`, output);
      if (compile.timedOut) return fail('timeout', '', output);
      const ok = spec.compiled ? spec.compiled(compile, hostDir) : compile.exitCode === 0;
      if (!ok) {
        // A module the problem imports is not installed: no completion could compile (a claim
        // confirmed in runBatch: the compiler's message may quote the sample's own source).
        const crash = classifyCrash(compile);
        const verdict = crash
          ? fail('crash', `compiler ${crash}`, output)
          : fail('compile_error', `compile error: ${tail(output)}`, output);
        return withMissingDependency(verdict, missingDependency(spec.language, output, item.problem), output);
      }
    }
    const run = await runSandboxed({
      ...common,
      argv: spec.run(ctx),
      timeoutSec: options.timeoutSec,
      cpuSec: options.timeoutSec + 1,
    });
    if (run.spawnError) return fail('error_of_run', `sandbox could not start: ${run.spawnError}`);
    if (sandboxFailed(run))
      return fail(
        'error_of_run',
        `sandbox could not start: ${tail(run.stderr, 500)}`,
        `${run.stdout}${run.stderr}`,
      );
    return verdictOfRun(spec, item, run, compileOutput, fail, base);
  } finally {
    await removeDir(hostDir);
  }
}

/** The verdict of a sample whose run step ended (in its own sandbox or in a warm worker). */
function verdictOfRun(
  spec: LanguageSpec,
  item: ExecutionItem,
  run: SandboxRunResult,
  compileOutput: string,
  fail: Fail,
  base: Base,
): ExecutionResult {
  const output = `${run.stdout}${run.stderr}`;
  if (run.timedOut || run.signal === 'SIGXCPU' || run.exitCode === 128 + 24)
    return fail('timeout', '', output);
  if (run.exitCode === 0) return { passed: true, result: 'passed', ...base(), output };
  // Confirmed in runBatch before it stands: the sample writes its own stderr.
  const missing = missingDependency(spec.language, `${compileOutput}\n${run.stderr}`, item.problem);
  return withMissingDependency(failedRun(spec, run, compileOutput, fail), missing, output);
}

/** The failure of a run that ended with a status other than 0, in time. */
function failedRun(
  spec: LanguageSpec,
  run: SandboxRunResult,
  compileOutput: string,
  fail: Fail,
): ExecutionResult {
  const output = `${run.stdout}${run.stderr}`;
  const crash = classifyCrash(run);
  if (crash) return fail('crash', `${crash}: ${tail(run.stderr, 500)}`, output);
  if (spec.compileSyntaxError?.test(compileOutput)) {
    return fail(
      'compile_error',
      `compile error: ${tail(compileOutput, 1000)}\n${tail(run.stderr, 1000)}`,
      output,
    );
  }
  if (spec.syntaxError?.test(run.stderr))
    return fail('compile_error', tail(run.stderr) || `exit code ${run.exitCode}`, output);
  const detail = tail(run.stderr) || (run.signal ? `killed by ${run.signal}` : `exit code ${run.exitCode}`);
  return fail('test_failure', detail, output);
}

/** The interpreter of warm workers (python-worker.ts), when this machine has it. */
const WARM_PYTHON = '/usr/bin/python3';

/** Whether `spec`'s samples run in warm workers here (bwrap, no compile step, python3 present). */
function runsWarm(spec: LanguageSpec, options: RunBatchOptions): boolean {
  return (
    spec.warm === true &&
    spec.compile === undefined &&
    detectSandbox(options.sandbox.kind).kind === 'bwrap' &&
    existsSync(WARM_PYTHON)
  );
}

/** Starts a warm worker whose sandbox shows what `spec`'s run step needs (and the snapshot's folder). */
function startWarm(
  spec: LanguageSpec,
  slot: number,
  options: RunBatchOptions,
  snapshot: NodeSnapshot | undefined,
): Promise<WarmWorker> {
  return WarmWorker.start(slot, options, {
    env: spec.env?.({ dir: SANDBOX_DIR }) ?? {},
    readOnlyPaths: spec.readOnlyPaths?.() ?? [],
    ...(snapshot ? { readOnlyAt: [{ source: snapshot.dir, target: SNAPSHOT_DIR_INSIDE }] } : {}),
    python: WARM_PYTHON,
  });
}

/** The snapshot of `spec`'s preloaded package for this batch, or undefined (none wanted, or it cannot be built). */
async function snapshotFor(spec: LanguageSpec): Promise<NodeSnapshot | undefined> {
  if (!spec.preload || !snapshotsEnabled()) return undefined;
  let file: string;
  try {
    file = require.resolve(spec.preload);
  } catch {
    return undefined;
  }
  return buildNodeSnapshot(spec.preload, file);
}

/** Whether a worker's node starts from `snapshot` and gets the preloaded package from it. */
async function snapshotWorks(
  spec: LanguageSpec,
  worker: WarmWorker,
  snapshot: NodeSnapshot,
  options: RunBatchOptions,
): Promise<boolean> {
  const answer = await worker.exec({
    argv: withSnapshot(spec.run({ dir: SANDBOX_DIR }), snapshot),
    files: { [spec.file]: probeProgram(snapshot) },
    timeoutSec: 30,
    cpuSec: 30,
    memoryBytes: options.sandbox.memoryBytes,
    maxOutputBytes: options.sandbox.maxOutputBytes,
  });
  return answer?.exit_code === 0 && answer.stdout === PROBE_OK;
}

/**
 * One sample in a warm worker: the program is written into the worker's emptied `/sample` and the
 * run step is forked there, with the same limits, paths and environment as in a sandbox of its own.
 */
async function runOneWarm(
  spec: LanguageSpec,
  item: ExecutionItem,
  worker: WarmWorker,
  options: RunBatchOptions,
  snapshot: NodeSnapshot | undefined,
): Promise<ExecutionResult> {
  const { base, fail } = outcomes(performance.now(), worker.kind, worker.warning);
  const program = assembleProgram(item.problem, item.sample.completion, spec.language);
  const argv = spec.run({ dir: SANDBOX_DIR });
  const answer = await worker.exec({
    argv: snapshot ? withSnapshot(argv, snapshot) : argv,
    files: { [spec.file]: program },
    timeoutSec: options.timeoutSec,
    cpuSec: options.timeoutSec + 1,
    memoryBytes: options.sandbox.memoryBytes,
    maxOutputBytes: options.sandbox.maxOutputBytes,
  });
  if (!answer) {
    // The worker died: the sample killed it, broke its answers, or its sandbox could not start.
    if (worker.fault) return fail('error_of_run', `sandbox error: ${worker.fault}`);
    return worker.ready
      ? fail('crash', 'the sample killed or stopped its worker')
      : fail('error_of_run', `sandbox could not start: ${tail(worker.stderr.join(''), 500)}`);
  }
  if (answer.result !== undefined) return fail('crash', answer.result.replace(/^failed: /, ''));
  const truncated = answer.dropped > 0;
  const run: SandboxRunResult = {
    exitCode: answer.exit_code,
    signal: null,
    timedOut: answer.timed_out,
    stdout: answer.stdout,
    stderr: answer.stderr,
    truncated,
    durationSec: answer.elapsed,
    kind: worker.kind,
    limitsHit: limitsHit({ exitCode: answer.exit_code, signal: null, truncated }),
  };
  return verdictOfRun(spec, item, run, '', fail, base);
}

/**
 * The fast path's worker of one lane: started on first use, replaced when it dies after it was
 * ready, dropped for good (the lane's samples take the reference path) when it never got ready.
 */
class IsolateLane {
  private worker: WarmWorker | undefined;
  private off = false;
  constructor(
    private readonly slot: number,
    private readonly options: RunBatchOptions,
    private readonly setup: IsolateSetup,
  ) {}

  /** A pass on the fast path, or undefined: the sample must take the reference path. */
  async pass(spec: LanguageSpec, item: ExecutionItem): Promise<ExecutionResult | undefined> {
    if (this.off) return undefined;
    this.worker ??= await startIsolateWorker(this.slot, this.options, this.setup);
    const worker = this.worker;
    const { base } = outcomes(performance.now(), worker.kind, worker.warning);
    const program = assembleProgram(item.problem, item.sample.completion, spec.language);
    const outcome = await runOnIsolate(worker, program, this.options);
    isolateStats[outcome ?? 'worker_lost'] += 1;
    if (!worker.alive) {
      this.off = !worker.ready;
      this.worker = undefined;
      await worker.stop();
    }
    // Nothing of node's ran: no output a `node main.js` that passed would have printed (console is a trap).
    return outcome === 'passed' ? { passed: true, result: 'passed', ...base(), output: '' } : undefined;
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    this.worker = undefined;
  }
}

function makeExecutor(spec: LanguageSpec): LanguageExecutor {
  return {
    language: spec.language,
    aliases: spec.aliases,
    async checkToolchain(sandbox?: SandboxOptions): Promise<ToolchainStatus> {
      const extra = spec.checkExtra?.();
      if (extra) return { ok: false, message: `${spec.language}: ${extra}` };
      if (sandbox?.kind === 'docker') {
        const image = sandbox.image ?? DEFAULT_IMAGE;
        const dir = await makeSampleDir(0, 'toolchain');
        try {
          const out = await runSandboxed({
            argv: spec.version,
            workDir: dir,
            slot: 0,
            options: sandbox,
            timeoutSec: 60,
          });
          if (out.exitCode !== 0) {
            return {
              ok: false,
              message: `${spec.language}: \`${spec.version.join(' ')}\` failed in image ${image}; install ${spec.install} in the image`,
            };
          }
          return { ok: true, version: `${out.stdout}${out.stderr}`.trim().split('\n')[0] ?? '' };
        } finally {
          await removeDir(dir);
        }
      }
      const [command, ...args] = spec.version;
      const out = spawnSync(command as string, args, { encoding: 'utf8', timeout: 30_000 });
      if (out.error || out.status !== 0) {
        return {
          ok: false,
          message: `${spec.language}: \`${spec.version.join(' ')}\` failed; install ${spec.install}`,
        };
      }
      return { ok: true, version: `${out.stdout}${out.stderr}`.trim().split('\n')[0] ?? '' };
    },
    async runBatch(items, options) {
      const results: ExecutionResult[] = new Array(items.length);
      let next = 0;
      const warm = runsWarm(spec, options);
      const built = warm && items.length > 0 ? await snapshotFor(spec) : undefined;
      const fast = warm && spec.isolates && !options.reference ? isolateSetup() : undefined;
      // Checked once, in the first worker ready, before any sample starts from it.
      let works: Promise<boolean> | undefined;
      const dependencies = new DependencyConfirmation();
      const lanes = Array.from(
        { length: Math.max(1, Math.min(options.workers, items.length)) },
        async (_, slot) => {
          let worker = warm ? await startWarm(spec, slot, options, built) : undefined;
          let snapshot: NodeSnapshot | undefined;
          const isolates = fast ? new IsolateLane(slot, options, fast) : undefined;
          const runItem = async (item: ExecutionItem): Promise<ExecutionResult> => {
            const passed = await isolates?.pass(spec, item);
            if (passed) return passed;
            if (!worker) return runOne(spec, item, slot, options);
            const result = await runOneWarm(spec, item, worker, options, snapshot);
            if (!worker.alive) {
              await worker.stop();
              worker = await startWarm(spec, slot, options, built);
            }
            return result;
          };
          try {
            if (worker && built) {
              works ??= snapshotWorks(spec, worker, built, options);
              await works;
              if (!worker.alive) {
                await worker.stop();
                worker = await startWarm(spec, slot, options, built);
              }
            }
            snapshot = built && (await works) ? built : undefined;
            while (next < items.length && !options.signal?.aborted) {
              const index = next++;
              const item = items[index] as ExecutionItem;
              const result = await dependencies.settle(item, await runItem(item), runItem);
              results[index] = result;
              options.onResult?.(index, result);
            }
          } finally {
            await Promise.all([worker?.stop(), isolates?.stop()]);
          }
        },
      );
      try {
        await Promise.all(lanes);
      } finally {
        if (built) await removeNodeSnapshot(built);
      }
      return results;
    },
  };
}

export const processExecutors: LanguageExecutor[] = LANGUAGES.map(makeExecutor);
