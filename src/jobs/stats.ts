/**
 * The job's statistics: the body of `jobs/<job>/result.json` (Harbor's `JobResult`: id,
 * started/finished, `stats` with Harbor's `evals` from harbor-stats.ts, berth's counts by
 * status) and the summary a finished job returns.
 */
import type { TrialResult, TrialStatus } from '../trials/result.ts';
import { VERSION } from '../version.ts';
import { harborJobStats } from './harbor-stats.ts';
import type { PlannedTrial } from './plan.ts';

const STATUSES: readonly TrialStatus[] = [
  'resolved',
  'unresolved',
  'error',
  'empty_patch',
  'patch_failed',
  'cancelled',
];

/** What the job knows at one moment, to write its result.json from. */
export interface JobProgress {
  id: string;
  jobName: string;
  startedAt: string;
  /** null while the job runs. */
  finishedAt: string | null;
  plan: readonly PlannedTrial[];
  /** Results by plan index. */
  results: ReadonlyMap<number, TrialResult>;
  /** Plan indices of the trials running now. */
  running: ReadonlySet<number>;
}

/** The body of the job's `result.json` at this moment. */
export function jobResultBody(progress: JobProgress): Record<string, unknown> {
  const { plan, results, running } = progress;
  const inOrder = plan.map((_, i) => results.get(i)).filter((r): r is TrialResult => r !== undefined);
  const snapshot = [...results.values()];
  const harbor = harborJobStats(inOrder);
  const count = (keep: (r: TrialResult) => boolean) => snapshot.filter(keep).length;
  return {
    id: progress.id,
    job_name: progress.jobName,
    berth_version: VERSION,
    started_at: progress.startedAt,
    updated_at: new Date().toISOString(),
    finished_at: progress.finishedAt,
    n_total_trials: plan.length,
    stats: {
      n_trials: harbor.n_trials,
      n_errors: harbor.n_errors,
      n_completed_trials: count((r) => r.berth.status !== 'cancelled'),
      n_errored_trials: count((r) => r.exception_info !== null && r.berth.status !== 'cancelled'),
      n_running_trials: running.size,
      n_pending_trials: plan.length - results.size - running.size,
      n_cancelled_trials: count((r) => r.berth.status === 'cancelled'),
      n_resolved_trials: count((r) => r.berth.resolved),
      by_status: Object.fromEntries(STATUSES.map((s) => [s, count((r) => r.berth.status === s)])),
      evals: harbor.evals,
    },
    trials: plan.flatMap((p, i) => {
      const r = results.get(i);
      return r
        ? [
            {
              trial_name: p.trialName,
              task_name: p.task.name,
              attempt: p.attempt,
              status: r.berth.status,
              reward: r.verifier_result?.rewards?.reward ?? 0,
            },
          ]
        : [];
    }),
  };
}
