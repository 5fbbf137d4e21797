/**
 * `berth compare`: which tasks flipped between two jobs, the difference in resolved rate over
 * the tasks both ran, how sure that difference is (McNemar's exact test when each task has one
 * attempt in each job; otherwise a paired sign-flip permutation test over tasks of the per-task
 * pass rate), a bootstrap interval for it, and the same per repository and language.
 */
import { mcnemarExact, pairedBootstrap, pairedPermutation } from '../stats/paired.ts';
import type { Interval } from '../stats/proportion.ts';
import type { JobRecord, TrialRecord } from './model.ts';
import { isFinished, type Rate, rateOf } from './summary.ts';

/** A task's attempts in one job. */
interface TaskTally {
  finished: number;
  resolved: number;
  repository: string | null;
  language: string | null;
}

/** A task whose pass rate changed: `resolved/finished` in each job. */
export interface Flip {
  task: string;
  a: string;
  b: string;
}

/** The difference between two jobs over a set of shared tasks. */
export interface Difference {
  shared_tasks: number;
  /** Mean over the shared tasks of the per-task pass rate, in each job. */
  rate_a: number | null;
  rate_b: number | null;
  /** rate_b - rate_a. */
  delta: number | null;
  /** 95% paired-bootstrap interval of `delta`. */
  interval: Interval | null;
  /** Two-sided p-value of the test named in `test`. */
  p: number | null;
  test: string;
}

export interface GroupDifference extends Difference {
  value: string;
}

export interface Comparison extends Difference {
  /** The first job (the baseline) and the one compared with it. */
  a: string;
  b: string;
  /** One attempt per task in both jobs (McNemar's test applies). */
  single_attempt: boolean;
  /** McNemar's discordant pairs: tasks only the baseline resolved (b) and only the other resolved (c). */
  discordant: { only_a: number; only_b: number } | null;
  /** Tasks whose pass rate went up / down from `a` to `b`. */
  gained: Flip[];
  lost: Flip[];
  /** Tasks only one of the two jobs ran (left out of the test). */
  only_in_a: number;
  only_in_b: number;
  by: { repository: GroupDifference[]; language: GroupDifference[] };
  /** One sentence: which job is better and how sure that is. */
  verdict: string;
}

export interface CompareResult {
  seed: number;
  resamples: number;
  jobs: Array<{
    name: string;
    agent: string | null;
    model: string | null;
    dataset: string | null;
    rate: Rate;
  }>;
  /** Each job after the first compared with the first. */
  comparisons: Comparison[];
}

function tally(trials: readonly TrialRecord[]): Map<string, TaskTally> {
  const tasks = new Map<string, TaskTally>();
  for (const trial of trials) {
    if (!isFinished(trial)) continue;
    const entry = tasks.get(trial.task) ?? {
      finished: 0,
      resolved: 0,
      repository: trial.repository,
      language: trial.language,
    };
    entry.finished++;
    if (trial.outcome === 'resolved') entry.resolved++;
    tasks.set(trial.task, entry);
  }
  return tasks;
}

const rateOfTally = (t: TaskTally) => t.resolved / t.finished;

/** The difference over the given shared tasks. */
function differenceOver(
  shared: readonly string[],
  a: Map<string, TaskTally>,
  b: Map<string, TaskTally>,
  options: { seed: number; resamples: number },
): Difference {
  if (shared.length === 0)
    return {
      shared_tasks: 0,
      rate_a: null,
      rate_b: null,
      delta: null,
      interval: null,
      p: null,
      test: 'none',
    };
  const pairs = shared.map((task) => ({
    a: rateOfTally(a.get(task) as TaskTally),
    b: rateOfTally(b.get(task) as TaskTally),
  }));
  const single = shared.every((task) => a.get(task)?.finished === 1 && b.get(task)?.finished === 1);
  const boot = pairedBootstrap(pairs, options);
  const rateA = pairs.reduce((sum, pair) => sum + pair.a, 0) / pairs.length;
  const rateB = pairs.reduce((sum, pair) => sum + pair.b, 0) / pairs.length;
  const permutation = pairedPermutation(pairs, options);
  let p: number | null = permutation?.p ?? null;
  let test = permutation?.exact
    ? `exact sign-flip permutation test over tasks (${permutation.arrangements} arrangements)`
    : `sign-flip permutation test over tasks (seed ${options.seed}, ${options.resamples} resamples)`;
  if (single) {
    const onlyA = pairs.filter((pair) => pair.a === 1 && pair.b === 0).length;
    const onlyB = pairs.filter((pair) => pair.a === 0 && pair.b === 1).length;
    p = mcnemarExact(onlyA, onlyB);
    test = "McNemar's exact test";
  }
  return {
    shared_tasks: shared.length,
    rate_a: rateA,
    rate_b: rateB,
    delta: rateB - rateA,
    interval: boot?.interval ?? null,
    p,
    test,
  };
}

function verdictOf(a: string, b: string, d: Difference): string {
  if (d.shared_tasks === 0 || d.delta === null) return `${a} and ${b} ran no task in common.`;
  const p = d.p === null ? '' : `p = ${d.p < 0.0001 ? d.p.toExponential(1) : d.p.toFixed(4)}`;
  if (d.delta === 0) return `No difference over ${d.shared_tasks} shared tasks (${p}).`;
  const size = `${(100 * Math.abs(d.delta)).toFixed(1)} pts ${d.delta > 0 ? 'more' : 'fewer'}`;
  const interval = d.interval
    ? ` (95% interval ${(100 * d.interval.low).toFixed(1)} to ${(100 * d.interval.high).toFixed(1)} pts)`
    : '';
  // One task is never evidence of a difference between jobs, whatever a test says.
  if (d.shared_tasks < 2)
    return `${b} resolved ${size} than ${a} on the one shared task: one task cannot show a difference (${p}).`;
  if (d.p !== null && d.p < 0.05)
    return `${d.delta > 0 ? b : a} is better: ${b} resolved ${size} than ${a}${interval}, significant at the 5% level (${p}).`;
  return `${b} resolved ${size} than ${a}${interval}, but this is not significant at the 5% level (${p}): too few tasks or attempts to tell.`;
}

function groups(
  shared: readonly string[],
  a: Map<string, TaskTally>,
  b: Map<string, TaskTally>,
  key: 'repository' | 'language',
  options: { seed: number; resamples: number },
): GroupDifference[] {
  const byValue = new Map<string, string[]>();
  for (const task of shared) {
    const value = a.get(task)?.[key] ?? b.get(task)?.[key] ?? '(none)';
    const list = byValue.get(value) ?? [];
    list.push(task);
    byValue.set(value, list);
  }
  if (byValue.size === 1 && byValue.has('(none)')) return [];
  return [...byValue]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([value, tasks]) => ({ value, ...differenceOver(tasks, a, b, options) }));
}

/** Compares job `b` with the baseline `a`. */
export function compareTwo(
  a: JobRecord,
  b: JobRecord,
  options: { seed: number; resamples: number },
): Comparison {
  const ta = tally(a.trials);
  const tb = tally(b.trials);
  const shared = [...ta.keys()].filter((task) => tb.has(task)).sort();
  const difference = differenceOver(shared, ta, tb, options);
  const single = difference.test.startsWith('McNemar');
  const gained: Flip[] = [];
  const lost: Flip[] = [];
  for (const task of shared) {
    const x = ta.get(task) as TaskTally;
    const y = tb.get(task) as TaskTally;
    const flip = { task, a: `${x.resolved}/${x.finished}`, b: `${y.resolved}/${y.finished}` };
    if (rateOfTally(y) > rateOfTally(x)) gained.push(flip);
    else if (rateOfTally(y) < rateOfTally(x)) lost.push(flip);
  }
  return {
    a: a.name,
    b: b.name,
    ...difference,
    single_attempt: single,
    discordant: single
      ? {
          only_a: shared.filter((t) => ta.get(t)?.resolved === 1 && tb.get(t)?.resolved === 0).length,
          only_b: shared.filter((t) => ta.get(t)?.resolved === 0 && tb.get(t)?.resolved === 1).length,
        }
      : null,
    gained,
    lost,
    only_in_a: [...ta.keys()].filter((task) => !tb.has(task)).length,
    only_in_b: [...tb.keys()].filter((task) => !ta.has(task)).length,
    by: {
      repository: groups(shared, ta, tb, 'repository', options),
      language: groups(shared, ta, tb, 'language', options),
    },
    verdict: verdictOf(a.name, b.name, difference),
  };
}

/** Compares every job after the first with the first. */
export function compareJobs(
  jobs: readonly JobRecord[],
  options: { seed: number; resamples?: number },
): CompareResult {
  const resamples = options.resamples ?? 10_000;
  const [baseline, ...others] = jobs;
  return {
    seed: options.seed,
    resamples,
    jobs: jobs.map((job) => ({
      name: job.name,
      agent: job.agent,
      model: job.model,
      dataset: job.dataset,
      rate: rateOf(job.trials),
    })),
    comparisons: baseline
      ? others.map((job) => compareTwo(baseline, job, { seed: options.seed, resamples }))
      : [],
  };
}
