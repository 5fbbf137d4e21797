/**
 * Harbor's job statistics (`src/harbor/models/job/result.py`: `JobStats.increment`,
 * `AgentDatasetStats`), computed from a job's trial results so the job's
 * `result.json` carries the `stats.evals` block Harbor's tools read:
 *
 * - one eval per `<agent>__<model>__<dataset>` (or `<agent>__<dataset>` without a model),
 *   as `JobStats.format_agent_evals_key` writes it: the model is `model_info.name` (for
 *   `-m openai/gpt-5`, `gpt-5`), the dataset the trial's `source`, else `adhoc`;
 * - `n_trials`: trials with rewards; `n_errors`: trials with an `exception_info`;
 * - `metrics`: `[{mean}]`, Harbor's default metric: the mean reward over every trial of the
 *   eval, a missing reward counting as 0 (errored trials included);
 * - `pass_at_k`: only when some task has more than one trial and every reward is a single
 *   key valued 0 or 1; k in {2, 4, 8, ...} ∪ {5, 10, 15, ...} up to the fewest trials of a
 *   task; the unbiased estimator averaged over tasks (no pass@1: the mean plays that role);
 * - `reward_stats`: reward key → value → trial names;
 * - `exception_stats`: exception type → trial names.
 */
import { passAtK } from '../functional/pass-at-k.ts';
import type { TrialResult } from '../trials/result.ts';

/** Harbor's AgentDatasetStats. */
export interface HarborEvalStats {
  n_trials: number;
  n_errors: number;
  metrics: Array<Record<string, number>>;
  /** k (as a string key) → pass@k; empty when not computed. */
  pass_at_k: Record<string, number>;
  /** reward key → reward value (as a string key, e.g. "1", "0.5") → trial names. */
  reward_stats: Record<string, Record<string, string[]>>;
  /** exception type → trial names. */
  exception_stats: Record<string, string[]>;
}

/** The part of Harbor's JobStats berth adds: legacy totals and the evals. */
export interface HarborJobStats {
  /** Trials that ended (Harbor's legacy `n_trials`, now `n_completed_trials`). */
  n_trials: number;
  /** Trials with an `exception_info` (Harbor's legacy `n_errors`, now `n_errored_trials`). */
  n_errors: number;
  evals: Record<string, HarborEvalStats>;
}

/** Harbor's evals key: `<agent>__<model>__<dataset>`, or `<agent>__<dataset>` without a model. */
export function evalsKey(result: Pick<TrialResult, 'agent_info' | 'source'>): string {
  const agent = result.agent_info.name;
  const model = result.agent_info.model_info?.name;
  const dataset = result.source || 'adhoc';
  return model ? `${agent}__${model}__${dataset}` : `${agent}__${dataset}`;
}

/** Harbor's pass@k ks: {2, 4, 8, ...} ∪ {5, 10, 15, ...}, at most `fewest`, ascending. */
export function harborPassAtKs(fewest: number): number[] {
  const ks = new Set<number>();
  for (let k = 2; k <= fewest; k *= 2) ks.add(k);
  for (let k = 5; k <= fewest; k += 5) ks.add(k);
  return [...ks].sort((a, b) => a - b);
}

/**
 * pass@k of one eval's trials, per Harbor: every trial's rewards must be one key valued 0 or 1
 * (a missing reward counts as 0), else `{}`; tasks are grouped by `task_name`.
 */
export function harborPassAtK(results: readonly TrialResult[]): Record<string, number> {
  const byTask = new Map<string, { n: number; c: number }>();
  for (const r of results) {
    const rewards = r.verifier_result?.rewards;
    let value = 0;
    if (rewards) {
      const values = Object.values(rewards);
      if (values.length !== 1) return {};
      value = values[0] as number;
    }
    if (value !== 0 && value !== 1) return {};
    const counts = byTask.get(r.task_name) ?? { n: 0, c: 0 };
    counts.n++;
    counts.c += value;
    byTask.set(r.task_name, counts);
  }
  if (byTask.size === 0) return {};
  const fewest = Math.min(...[...byTask.values()].map((t) => t.n));
  const out: Record<string, number> = {};
  for (const k of harborPassAtKs(fewest)) {
    let sum = 0;
    for (const t of byTask.values()) sum += passAtK(t.n, t.c, k);
    out[String(k)] = sum / byTask.size;
  }
  return out;
}

/**
 * Harbor's default `mean` metric: `{mean}` over the trials' single reward (a missing reward
 * counts as 0); when a trial has several reward keys, the mean of each key, by key.
 */
export function harborMean(results: readonly TrialResult[]): Record<string, number> {
  if (results.length === 0) return { mean: 0 };
  const keys = new Set(results.flatMap((r) => Object.keys(r.verifier_result?.rewards ?? {})));
  const rewardOf = (r: TrialResult, key?: string) => {
    const rewards = r.verifier_result?.rewards ?? {};
    const value = key === undefined ? Object.values(rewards)[0] : rewards[key];
    return typeof value === 'number' ? value : 0;
  };
  const single = results.every((r) => Object.keys(r.verifier_result?.rewards ?? {}).length <= 1);
  if (single) return { mean: results.reduce((s, r) => s + rewardOf(r), 0) / results.length };
  return Object.fromEntries(
    [...keys].map((key) => [key, results.reduce((s, r) => s + rewardOf(r, key), 0) / results.length]),
  );
}

/** Harbor's `stats` totals and evals of a job's (finished or cancelled) trial results. */
export function harborJobStats(results: readonly TrialResult[]): HarborJobStats {
  const groups = new Map<string, TrialResult[]>();
  for (const r of results) {
    const key = evalsKey(r);
    const list = groups.get(key) ?? [];
    list.push(r);
    groups.set(key, list);
  }
  const evals: Record<string, HarborEvalStats> = {};
  for (const [key, list] of groups) {
    const rewardStats: Record<string, Record<string, string[]>> = {};
    const exceptionStats: Record<string, string[]> = {};
    let nTrials = 0;
    let nErrors = 0;
    for (const r of list) {
      const rewards = r.verifier_result?.rewards;
      if (rewards) {
        nTrials++;
        for (const [name, value] of Object.entries(rewards)) {
          const byValue = rewardStats[name] ?? {};
          rewardStats[name] = byValue;
          const names = byValue[String(value)] ?? [];
          byValue[String(value)] = names;
          names.push(r.trial_name);
        }
      }
      if (r.exception_info) {
        nErrors++;
        const type = r.exception_info.exception_type;
        const names = exceptionStats[type] ?? [];
        exceptionStats[type] = names;
        names.push(r.trial_name);
      }
    }
    evals[key] = {
      n_trials: nTrials,
      n_errors: nErrors,
      metrics: [harborMean(list)],
      pass_at_k: harborPassAtK(list),
      reward_stats: rewardStats,
      exception_stats: exceptionStats,
    };
  }
  return {
    n_trials: results.length,
    n_errors: results.filter((r) => r.exception_info !== null).length,
    evals,
  };
}
