/**
 * The numbers at the top of a report: the resolved rate with its 95% Wilson interval, pass@k,
 * mean rewards, errors by exception type, tokens and cost, durations, and the same rate per
 * repository, language and task type.
 */
import { passAtK } from '../functional/pass-at-k.ts';
import { harborPassAtKs } from '../jobs/harbor-stats.ts';
import { type Interval, wilsonInterval } from '../stats/proportion.ts';
import { CATEGORY_KEYS, type CategoryKey, type TrialOutcome, type TrialRecord } from './model.ts';

/** A resolved rate over finished trials. */
export interface Rate {
  /** Finished trials: resolved, failed and errored (not cancelled, running or pending). */
  n: number;
  resolved: number;
  /** resolved / n; null when n is 0. */
  rate: number | null;
  /** 95% Wilson score interval of the rate. */
  interval: Interval | null;
}

/** A rate within one category value. */
export interface GroupRate extends Rate {
  value: string;
  /** Mean of the primary reward over the group's finished trials, a missing reward counting as 0. */
  mean_reward: number | null;
}

export interface JobSummary {
  counts: Record<TrialOutcome, number>;
  rate: Rate;
  /** Attempts per task (the fewest any task has), for pass@k. */
  attempts: number;
  /** pass@k for k > 1 (Harbor's ks), when every reward is 0 or 1; `{}` otherwise. */
  pass_at_k: Record<string, number>;
  /** Mean of each reward key over finished trials, a missing reward counting as 0 (Harbor's `mean`). */
  mean_rewards: Record<string, number>;
  /** Exception types, most frequent first, with the trials that raised them. */
  errors: Array<{ type: string; count: number; trials: string[] }>;
  tokens: { input: number; cache: number; output: number } | null;
  /** Sum of the known costs; null when no trial reported one. */
  cost_usd: number | null;
  /** Trials whose cost is known. */
  cost_known: number;
  /** Sum of the trials' durations (s). */
  trial_time_sec: number;
  /** Mean seconds per phase over the trials that ran it. */
  phase_means: Record<string, number>;
  by: Record<CategoryKey, GroupRate[]>;
}

const FINISHED: ReadonlySet<TrialOutcome> = new Set(['resolved', 'failed', 'errored']);

/** Whether a trial counts in the rate. */
export const isFinished = (trial: TrialRecord) => FINISHED.has(trial.outcome);

/** Resolved out of finished, with the Wilson interval. */
export function rateOf(trials: readonly TrialRecord[]): Rate {
  const finished = trials.filter(isFinished);
  const resolved = finished.filter((trial) => trial.outcome === 'resolved').length;
  return {
    n: finished.length,
    resolved,
    rate: finished.length === 0 ? null : resolved / finished.length,
    interval: wilsonInterval(resolved, finished.length),
  };
}

/**
 * pass@k per Harbor (harbor-format §5.4): only when every finished trial's primary reward is 0 or
 * 1 (a missing one counting as 0); k in {2, 4, 8, ...} ∪ {5, 10, ...} up to the fewest attempts of
 * a task; the unbiased estimator averaged over tasks.
 */
export function passAtKOf(trials: readonly TrialRecord[]): {
  attempts: number;
  pass_at_k: Record<string, number>;
} {
  const byTask = new Map<string, { n: number; c: number }>();
  let binary = true;
  for (const trial of trials.filter(isFinished)) {
    const reward = trial.outcome === 'resolved' ? 1 : (trial.reward ?? 0);
    if (reward !== 0 && reward !== 1) binary = false;
    const counts = byTask.get(trial.task) ?? { n: 0, c: 0 };
    counts.n++;
    if (trial.outcome === 'resolved') counts.c++;
    byTask.set(trial.task, counts);
  }
  if (byTask.size === 0) return { attempts: 0, pass_at_k: {} };
  const fewest = Math.min(...[...byTask.values()].map((counts) => counts.n));
  const pass: Record<string, number> = {};
  if (binary)
    for (const k of harborPassAtKs(fewest)) {
      let sum = 0;
      for (const { n, c } of byTask.values()) sum += passAtK(n, c, k);
      pass[String(k)] = sum / byTask.size;
    }
  return { attempts: fewest, pass_at_k: pass };
}

/** The primary reward, or 1 / 0 for a resolved / unresolved trial that has none (SWE-bench rows). */
const rewardOf = (trial: TrialRecord) => trial.reward ?? (trial.outcome === 'resolved' ? 1 : 0);

/** The rate of each value of `key`, sorted by value; trials without a value are `(none)`. */
export function groupRates(trials: readonly TrialRecord[], key: CategoryKey): GroupRate[] {
  const groups = new Map<string, TrialRecord[]>();
  for (const trial of trials) {
    const value = trial[key] ?? '(none)';
    const list = groups.get(value) ?? [];
    list.push(trial);
    groups.set(value, list);
  }
  return [...groups]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([value, list]) => {
      const finished = list.filter(isFinished);
      return {
        value,
        ...rateOf(list),
        mean_reward:
          finished.length === 0
            ? null
            : finished.reduce((sum, trial) => sum + rewardOf(trial), 0) / finished.length,
      };
    });
}

export function summarize(trials: readonly TrialRecord[]): JobSummary {
  const counts: Record<TrialOutcome, number> = {
    resolved: 0,
    failed: 0,
    errored: 0,
    cancelled: 0,
    running: 0,
    pending: 0,
  };
  for (const trial of trials) counts[trial.outcome]++;
  const finished = trials.filter(isFinished);
  const keys = new Set(finished.flatMap((trial) => Object.keys(trial.rewards ?? {})));
  const mean_rewards: Record<string, number> = {};
  for (const key of [...keys].sort())
    mean_rewards[key] =
      finished.reduce((sum, trial) => sum + (trial.rewards?.[key] ?? 0), 0) / finished.length;
  const errors = new Map<string, string[]>();
  for (const trial of trials)
    if (trial.exception && trial.outcome !== 'cancelled') {
      const list = errors.get(trial.exception.type) ?? [];
      list.push(trial.name);
      errors.set(trial.exception.type, list);
    }
  const withTokens = trials.filter(
    (trial) => trial.input_tokens !== null || trial.output_tokens !== null || trial.cache_tokens !== null,
  );
  const costs = trials.map((trial) => trial.cost_usd).filter((cost): cost is number => cost !== null);
  const phaseMeans: Record<string, number> = {};
  for (const phase of ['environment', 'agent_setup', 'agent', 'verifier'] as const) {
    const values = trials.map((trial) => trial.phases[phase]).filter((v): v is number => v !== null);
    if (values.length > 0) phaseMeans[phase] = values.reduce((a, b) => a + b, 0) / values.length;
  }
  const { attempts, pass_at_k } = passAtKOf(trials);
  return {
    counts,
    rate: rateOf(trials),
    attempts,
    pass_at_k,
    mean_rewards,
    errors: [...errors]
      .map(([type, names]) => ({ type, count: names.length, trials: names }))
      .sort((a, b) => b.count - a.count || a.type.localeCompare(b.type)),
    tokens:
      withTokens.length === 0
        ? null
        : {
            input: withTokens.reduce((sum, trial) => sum + (trial.input_tokens ?? 0), 0),
            cache: withTokens.reduce((sum, trial) => sum + (trial.cache_tokens ?? 0), 0),
            output: withTokens.reduce((sum, trial) => sum + (trial.output_tokens ?? 0), 0),
          },
    cost_usd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
    cost_known: costs.length,
    trial_time_sec: trials.reduce((sum, trial) => sum + (trial.duration_sec ?? 0), 0),
    phase_means: phaseMeans,
    by: Object.fromEntries(CATEGORY_KEYS.map((key) => [key, groupRates(trials, key)])) as Record<
      CategoryKey,
      GroupRate[]
    >,
  };
}
