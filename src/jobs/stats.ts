/**
 * The job's statistics: the body of `jobs/<job>/result.json` (Harbor's `JobResult`: id,
 * started/updated/finished, `stats` with Harbor's counts and `evals` from harbor-stats.ts;
 * berth's counts by status and its trial list under `berth`) and the summary a finished job
 * returns.
 */
import { TRIAL_STATUSES, type TrialResult } from '../trials/result.ts';
import { VERSION } from '../version.ts';
import { harborJobStats } from './harbor-stats.ts';
import type { PlannedTrial } from './plan.ts';

/** Tokens and cost summed over a job's trials (their `agent_result`). */
export interface ModelUsageTotals {
  n_input_tokens: number;
  n_cache_tokens: number;
  n_output_tokens: number;
  /** USD over the trials whose cost is known; null when none is. */
  cost_usd: number | null;
  /** Trials that called models but whose cost is unknown (no price for the model). */
  n_trials_cost_unknown: number;
}

/** The model usage totals of trial results, or undefined when none called a model. */
export function modelUsageTotals(results: readonly TrialResult[]): ModelUsageTotals | undefined {
  const used = results.filter((r) => typeof r.agent_result?.n_input_tokens === 'number');
  if (used.length === 0) return undefined;
  const sum = (key: string) => used.reduce((total, r) => total + (Number(r.agent_result?.[key]) || 0), 0);
  const priced = used.filter((r) => typeof r.agent_result?.cost_usd === 'number');
  return {
    n_input_tokens: sum('n_input_tokens'),
    n_cache_tokens: sum('n_cache_tokens'),
    n_output_tokens: sum('n_output_tokens'),
    cost_usd:
      priced.length === 0
        ? null
        : Math.round(priced.reduce((t, r) => t + Number(r.agent_result?.cost_usd), 0) * 1e9) / 1e9,
    n_trials_cost_unknown: used.length - priced.length,
  };
}

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
  /** Trials not started because the job's model budget was spent. */
  overBudget: number;
  /** Trials run again after an exception (Harbor's `n_retries`). */
  retries?: number;
}

/**
 * The body of the job's `result.json` at this moment. Harbor's counts as Harbor counts them
 * (`JobStats.increment`): every trial with a result is completed, one with an exception errored
 * (a cancelled one too: its exception is `CancelledError`), tokens and cost summed over the
 * trials that report them.
 */
export function jobResultBody(progress: JobProgress): Record<string, unknown> {
  const { plan, results, running } = progress;
  const inOrder = plan.map((_, i) => results.get(i)).filter((r): r is TrialResult => r !== undefined);
  const snapshot = [...results.values()];
  const harbor = harborJobStats(inOrder);
  const usage = modelUsageTotals(snapshot);
  const count = (keep: (r: TrialResult) => boolean) => snapshot.filter(keep).length;
  return {
    id: progress.id,
    started_at: progress.startedAt,
    updated_at: new Date().toISOString(),
    finished_at: progress.finishedAt,
    n_total_trials: plan.length,
    stats: {
      n_completed_trials: results.size,
      n_errored_trials: count((r) => r.exception_info !== null),
      n_running_trials: running.size,
      n_pending_trials: Math.max(plan.length - results.size - running.size, 0),
      n_cancelled_trials: count((r) => r.berth.status === 'cancelled'),
      n_retries: progress.retries ?? 0,
      evals: harbor.evals,
      n_input_tokens: usage?.n_input_tokens ?? null,
      n_cache_tokens: usage?.n_cache_tokens ?? null,
      n_output_tokens: usage?.n_output_tokens ?? null,
      cost_usd: usage?.cost_usd ?? null,
    },
    berth: {
      version: VERSION,
      job_name: progress.jobName,
      n_resolved_trials: count((r) => r.berth.resolved),
      by_status: Object.fromEntries(TRIAL_STATUSES.map((s) => [s, count((r) => r.berth.status === s)])),
      ...(usage ? { n_trials_cost_unknown: usage.n_trials_cost_unknown } : {}),
      ...(progress.overBudget > 0
        ? { model_budget_exhausted: true, n_not_started_over_budget: progress.overBudget }
        : {}),
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
    },
  };
}
