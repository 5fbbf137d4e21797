/**
 * `berth eval` as a job, like `berth run`: the same job folder (`jobs/<job>/`, locked while it
 * runs), the same event log (`events.jsonl`: `job-start`, one `trial-end` per sample as its
 * verdict comes in, `job-end`; docs/events.md) and a `result.json` with the job's id, times and
 * statistics (pass@k). The samples themselves still run as one fast in-process batch in the
 * sandbox (evaluate.ts): a sample is a trial whose agent already answered, so no environment,
 * agent or verifier phase is started for it.
 */
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { lockJobDir } from '../jobs/lock.ts';
import { trialNameFor } from '../jobs/plan.ts';
import { EventLog } from '../trials/event-log.ts';
import { type BerthEvent, EVENTS_SCHEMA_VERSION, eventTime } from '../trials/events.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { VERSION } from '../version.ts';
import { type EvaluateOptions, type EvaluateSummary, evaluate } from './evaluate.ts';
import { readSamples } from './formats.ts';

export interface EvalJobOptions extends EvaluateOptions {
  jobsDir: string;
  jobName: string;
  /** What config.json records (the command line's options). */
  config?: Record<string, unknown>;
  /** Every event as it happens (also appended to the job's `events.jsonl`). */
  onEvent?: (event: BerthEvent) => void;
}

/** Runs an evaluation as a job and returns its summary, with the job's folder. */
export async function runEvalJob(options: EvalJobOptions): Promise<EvaluateSummary & { job_dir: string }> {
  const jobDir = resolve(options.jobsDir, options.jobName);
  const release = await lockJobDir(jobDir, options.jobName);
  const log = await EventLog.open(join(jobDir, 'events.jsonl'));
  const job = options.jobName;
  const emit = (event: BerthEvent) => {
    log.write(event);
    options.onEvent?.(event);
  };
  try {
    const problems = options.problems;
    const samples =
      options.samples ?? (problems ? await readSamples(options.samplesFile, problems) : undefined);
    const id = randomUUID();
    const startedAt = new Date().toISOString();
    await writeJsonAtomic(join(jobDir, 'config.json'), {
      job_name: job,
      kind: 'eval',
      problems: resolve(options.problemsFile),
      samples: resolve(options.samplesFile),
      berth_version: VERSION,
      ...options.config,
    });
    emit({
      type: 'job-start',
      v: EVENTS_SCHEMA_VERSION,
      time: eventTime(),
      job,
      job_id: id,
      n_trials: samples?.length ?? 0,
      berth_version: VERSION,
    });
    const perTask = new Map<string, number>();
    const summary = await evaluate({
      ...options,
      ...(samples ? { samples } : {}),
      onProgress: (done, total, sample, result) => {
        const n = (perTask.get(sample.task_id) ?? 0) + 1;
        perTask.set(sample.task_id, n);
        const brokenRun = result.kind === 'error_of_run';
        emit({
          type: 'trial-end',
          v: EVENTS_SCHEMA_VERSION,
          time: eventTime(),
          job,
          trial: trialNameFor(sample.task_id, n),
          task: sample.task_id,
          attempt: n,
          status: brokenRun ? 'error' : result.passed ? 'resolved' : 'unresolved',
          resolved: result.passed,
          rewards: brokenRun ? null : { reward: result.passed ? 1 : 0 },
          exception: brokenRun ? { type: 'RunError', message: result.result } : null,
          duration_sec: Math.round(result.time_elapsed * 1000) / 1000,
          reused: false,
        });
        options.onProgress?.(done, total, sample, result);
      },
    });
    await writeJsonAtomic(join(jobDir, 'result.json'), {
      id,
      job_name: job,
      kind: 'eval',
      berth_version: VERSION,
      started_at: startedAt,
      finished_at: new Date().toISOString(),
      n_total_trials: summary.samples,
      stats: {
        n_trials: summary.samples,
        n_resolved_trials: summary.passed,
        pass_at_k: summary.pass_at_k,
        failures: summary.failures,
        by_language: summary.by_language,
      },
      summary,
    });
    emit({
      type: 'job-end',
      v: EVENTS_SCHEMA_VERSION,
      time: eventTime(),
      job,
      duration_sec: summary.duration_sec,
      n_trials: summary.samples,
      n_finished: summary.samples,
      n_resolved: summary.passed,
      n_errors: 0,
      cancelled: options.signal?.aborted ?? false,
    });
    return { ...summary, job_dir: jobDir };
  } finally {
    log.close();
    await release();
  }
}
