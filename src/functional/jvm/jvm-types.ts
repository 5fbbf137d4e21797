import type { JvmLanguage } from './program.ts';
import type { SandboxKind } from './server.ts';

/** One Kotlin or Java sample to run: the problem's parts and the completion. */
export interface JvmSample {
  /** Caller's key, returned unchanged in the verdict. */
  key: string;
  language: JvmLanguage;
  prompt: string;
  completion: string;
  test: string;
}

/**
 * Outcome of one sample.
 * - `passed`: compiled and the program's main ended with exit status 0.
 * - `failed`: the program ended with a non-zero status (a test threw, an uncaught exception, System.exit(n)).
 * - `compile_error`: the compiler refused the program.
 * - `timed_out`: compilation or the run exceeded its limit.
 * - `crashed`: the JVM running it died (out of memory beyond recovery, a native crash).
 */
export type JvmStatus = 'passed' | 'failed' | 'compile_error' | 'timed_out' | 'crashed';

export interface JvmVerdict {
  key: string;
  status: JvmStatus;
  /**
   * What mxeval puts in `result`: the compiler's messages for a compile error, the run's stderr
   * otherwise (usually empty when passed), a timeout text for a timeout.
   */
  message: string;
  /** The program's stdout (capped). */
  stdout: string;
  /** Exit status of the program; null when it did not run to an end. */
  exitCode: number | null;
  /** Run time of the program in milliseconds (mxeval's `time_elapsed`); null when it did not run. */
  timeMs: number | null;
  /** How the program was isolated. */
  sandbox: SandboxKind;
  /** Set when the program ran with weaker isolation than asked (e.g. unsandboxed). */
  warning?: string;
}

export interface JvmRunOptions {
  /** Seconds each program's run may take (mxeval CLI default 15). */
  timeoutSeconds?: number;
  /** Seconds one compilation may take (mxeval: 100, for one file). */
  compileTimeoutSeconds?: number;
  /**
   * Run with JVM assertions enabled (`-ea`, default true): a test's `assert` anywhere (a
   * one-line `main`, after `;`, inside a lambda) must be able to fail. `false` reproduces
   * mxeval's commands exactly (no `-ea`).
   */
  assertions?: boolean;
  /** Runner JVMs (fast path) or parallel samples (reference path). Default: 2 or the CPU count if lower. */
  workers?: number;
  /** Warm compiler JVMs on the fast path (default: as many as workers). */
  compilers?: number;
  /** Samples per compiler call on the fast path (default 100). */
  batchSize?: number;
  /** Cap on captured stdout and stderr, bytes each (default 65536). */
  outputCapBytes?: number;
  /** Heap limit of each runner JVM in MiB (default 1024). */
  memoryMiB?: number;
  /** Isolation of the program runs (default `auto`: bwrap, else unshare, else none with a warning). */
  sandbox?: 'auto' | SandboxKind;
  /** Called as each verdict is known. */
  onVerdict?: (v: JvmVerdict) => void;
}

export const DEFAULTS = {
  timeoutSeconds: 15,
  compileTimeoutSeconds: 100,
  batchSize: 100,
  outputCapBytes: 65536,
  memoryMiB: 1024,
} as const;
