/**
 * `berth leaderboard JOBS_DIR`: one row per agent and model, per dataset, over every job in the
 * folder: the score (the mean over tasks of each task's pass rate) with its 95% Wilson interval
 * over tasks, the infrastructure errors apart, cost and time. Read from the job folders each time
 * (no index to go stale: a thousand jobs read in seconds).
 *
 * Errors: a trial that ended with no verdict because something other than the agent's work
 * failed (berth's status `error`: the environment's set-up, the verifier's machinery, a limit...;
 * a Harbor trial with an exception and no reward) is counted in `errors` and left out of the
 * score, as Inspect AI leaves errored samples out of its scores. Harbor's `mean` counts such a
 * trial as reward 0; a patch that does not apply (`patch_failed`) is the agent's and counts as
 * not resolved.
 */
import { resolve } from 'node:path';
import PQueue from 'p-queue';
import { type Interval, wilsonIntervalOfRate } from '../stats/proportion.ts';
import type { JobRecord, TrialRecord } from './model.ts';
import { listJobDirs, readJob } from './read-job.ts';
import { isFinished } from './summary.ts';

/** Whether a finished trial is an infrastructure error: no verdict, and not for the agent's patch. */
export const isInfrastructureError = (trial: TrialRecord): boolean =>
  trial.outcome === 'errored' && trial.status !== 'patch_failed';

/** An agent's score on a dataset: the mean of its tasks' pass rates, over tasks. */
export interface TaskScore {
  /** Tasks with at least one scored trial (the interval's n). */
  tasks: number;
  /** Mean over tasks of (resolved / scored trials of the task); null without tasks. */
  mean: number | null;
  /** 95% Wilson score interval of `mean` with n = tasks (attempts of one task are not independent). */
  interval: Interval | null;
}

/** The score of scored trials (finished, infrastructure errors left out). */
export function taskScore(trials: readonly TrialRecord[]): TaskScore {
  const byTask = new Map<string, { n: number; resolved: number }>();
  for (const trial of trials) {
    const task = byTask.get(trial.task) ?? { n: 0, resolved: 0 };
    task.n++;
    if (trial.outcome === 'resolved') task.resolved++;
    byTask.set(trial.task, task);
  }
  if (byTask.size === 0) return { tasks: 0, mean: null, interval: null };
  let sum = 0;
  for (const { n, resolved } of byTask.values()) sum += resolved / n;
  const mean = Math.min(1, sum / byTask.size);
  return { tasks: byTask.size, mean, interval: wilsonIntervalOfRate(mean, byTask.size) };
}

export interface LeaderboardRow {
  agent: string;
  model: string | null;
  /** The jobs the row's trials come from, by name. */
  jobs: string[];
  /** The score over tasks (infrastructure errors left out). */
  score: TaskScore;
  /** Scored trials: finished, infrastructure errors left out. */
  trials: number;
  /** Resolved trials among them. */
  resolved: number;
  /** Finished trials left out of the score as infrastructure errors (`isInfrastructureError`). */
  errors: number;
  /** Sum of the known costs (USD); null when no trial reported one. */
  cost_usd: number | null;
  /** Mean seconds per finished trial. */
  mean_trial_sec: number | null;
  /** A job of the row is still running. */
  running: boolean;
}

export interface LeaderboardData {
  jobs_dir: string;
  datasets: Array<{ dataset: string; rows: LeaderboardRow[] }>;
  /** Folders that could not be read as jobs, with why. */
  skipped: Array<{ name: string; error: string }>;
}

/** Rows from jobs already read. */
export function leaderboardOf(
  jobsDir: string,
  jobs: readonly JobRecord[],
  skipped: LeaderboardData['skipped'] = [],
): LeaderboardData {
  const byDataset = new Map<string, Map<string, { job: JobRecord[]; agent: string; model: string | null }>>();
  for (const job of jobs)
    for (const trial of job.trials) {
      if (!isFinished(trial)) continue;
      const dataset = job.dataset ?? trial.dataset ?? '(unknown)';
      const rows = byDataset.get(dataset) ?? new Map();
      const key = `${trial.agent}\u0000${trial.model ?? ''}`;
      const row = rows.get(key) ?? { job: [], agent: trial.agent, model: trial.model };
      if (!row.job.includes(job)) row.job.push(job);
      rows.set(key, row);
      byDataset.set(dataset, rows);
    }
  const datasets = [...byDataset]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([dataset, rows]) => ({
      dataset,
      rows: [...rows.values()]
        .map(({ job, agent, model }): LeaderboardRow => {
          const trials = job.flatMap((j) =>
            j.trials.filter(
              (t) =>
                isFinished(t) &&
                t.agent === agent &&
                t.model === model &&
                (j.dataset ?? t.dataset ?? '(unknown)') === dataset,
            ),
          );
          const scored = trials.filter((t) => !isInfrastructureError(t));
          const costs = trials.map((t) => t.cost_usd).filter((c): c is number => c !== null);
          const times = trials.map((t) => t.duration_sec).filter((s): s is number => s !== null);
          return {
            agent,
            model,
            jobs: job.map((j) => j.name).sort(),
            score: taskScore(scored),
            trials: scored.length,
            resolved: scored.filter((t) => t.outcome === 'resolved').length,
            errors: trials.length - scored.length,
            cost_usd: costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null,
            mean_trial_sec: times.length > 0 ? times.reduce((a, b) => a + b, 0) / times.length : null,
            running: job.some((j) => j.running),
          };
        })
        .sort(
          (x, y) =>
            (y.score.mean ?? -1) - (x.score.mean ?? -1) ||
            (y.score.interval?.low ?? 0) - (x.score.interval?.low ?? 0) ||
            x.agent.localeCompare(y.agent),
        ),
    }));
  return { jobs_dir: resolve(jobsDir), datasets, skipped };
}

/** Reads every job in `jobsDir` and ranks agent × model per dataset. */
export async function buildLeaderboard(jobsDir: string): Promise<LeaderboardData> {
  const names = await listJobDirs(jobsDir);
  const queue = new PQueue({ concurrency: 8 });
  const skipped: LeaderboardData['skipped'] = [];
  const jobs = await Promise.all(
    names.map((name) =>
      queue.add(() =>
        readJob(resolve(jobsDir, name)).catch((error: Error) => {
          skipped.push({ name, error: error.message });
          return undefined;
        }),
      ),
    ),
  );
  return leaderboardOf(
    jobsDir,
    jobs.filter((job): job is JobRecord => job !== undefined),
    skipped,
  );
}
