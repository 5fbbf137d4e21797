/**
 * `berth eval` as a job, like `berth run`: the same job folder (`jobs/<job>/`, locked while it
 * runs), the same event log (`events.jsonl`: `job-start`, one `trial-end` per sample as its
 * verdict comes in, `job-end`; docs/events.md) and a `result.json` with the job's id, times and
 * statistics (pass@k). The samples themselves still run as one fast in-process batch in the
 * sandbox (evaluate.ts): a sample is a trial whose agent already answered, so no environment,
 * agent or verifier phase is started for it. config.json and result.json are Harbor's JobConfig and
 * JobResult (the problems file as the dataset, the samples' agent as the agent; berth's own
 * settings and the pass@k summary under `berth`), `job.log` holds the events as text.
 */
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { noteJobFolder } from '../jobs/job-folder-log.ts';
import { lockJobDir } from '../jobs/lock.ts';
import { trialNameFor } from '../jobs/names.ts';
import { EventLog } from '../trials/event-log.ts';
import { EVENTS_SCHEMA_VERSION, eventTime } from '../trials/event-stamp.ts';
import type { BerthEvent } from '../trials/events.ts';
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
  noteJobFolder(jobDir);
  const log = await EventLog.open(join(jobDir, 'events.jsonl'), { text: join(jobDir, 'job.log') });
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
    const agent = options.config?.agent;
    await writeJsonAtomic(join(jobDir, 'config.json'), {
      job_name: job,
      jobs_dir: resolve(options.jobsDir),
      n_attempts: 1,
      // The samples' author: `-a oracle|nop`, else the samples file (Harbor's agent by name).
      agents: [{ name: typeof agent === 'string' ? agent : 'samples', model_name: null }],
      datasets: [
        { path: resolve(options.problemsFile), task_names: null, exclude_task_names: null, n_tasks: null },
      ],
      tasks: [],
      berth: {
        version: VERSION,
        kind: 'eval',
        problems: resolve(options.problemsFile),
        samples: resolve(options.samplesFile),
        options: options.config ?? {},
      },
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
    const finishedAt = new Date().toISOString();
    await writeJsonAtomic(join(jobDir, 'result.json'), {
      id,
      started_at: startedAt,
      updated_at: finishedAt,
      finished_at: finishedAt,
      n_total_trials: summary.samples,
      // Harbor's JobStats: every sample is a finished trial (no evals: pass@k is under `berth`).
      stats: {
        n_completed_trials: summary.samples,
        n_errored_trials: 0,
        n_running_trials: 0,
        n_pending_trials: 0,
        n_cancelled_trials: 0,
        n_retries: 0,
        evals: {},
      },
      berth: {
        version: VERSION,
        job_name: job,
        kind: 'eval',
        n_trials: summary.samples,
        n_resolved_trials: summary.passed,
        pass_at_k: summary.pass_at_k,
        failures: summary.failures,
        by_language: summary.by_language,
        summary,
      },
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
