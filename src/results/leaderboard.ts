/**
 * `berth leaderboard JOBS_DIR`: one row per agent and model, per dataset, over every job in the
 * folder: the resolved rate of their finished trials with its 95% Wilson interval, cost and time.
 * Read from the job folders each time (no index to go stale: a thousand jobs read in seconds).
 */
import { resolve } from 'node:path';
import PQueue from 'p-queue';
import type { JobRecord } from './model.ts';
import { listJobDirs, readJob } from './read-job.ts';
import { isFinished, type Rate, rateOf } from './summary.ts';

export interface LeaderboardRow {
  agent: string;
  model: string | null;
  /** The jobs the row's trials come from, by name. */
  jobs: string[];
  /** Distinct tasks with a finished trial. */
  tasks: number;
  rate: Rate;
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
          const costs = trials.map((t) => t.cost_usd).filter((c): c is number => c !== null);
          const times = trials.map((t) => t.duration_sec).filter((s): s is number => s !== null);
          return {
            agent,
            model,
            jobs: job.map((j) => j.name).sort(),
            tasks: new Set(trials.map((t) => t.task)).size,
            rate: rateOf(trials),
            cost_usd: costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null,
            mean_trial_sec: times.length > 0 ? times.reduce((a, b) => a + b, 0) / times.length : null,
            running: job.some((j) => j.running),
          };
        })
        .sort(
          (x, y) =>
            (y.rate.rate ?? -1) - (x.rate.rate ?? -1) ||
            (y.rate.interval?.low ?? 0) - (x.rate.interval?.low ?? 0) ||
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
