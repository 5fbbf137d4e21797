/**
 * Paired comparisons of two jobs over the tasks both ran: McNemar's exact test when each
 * task has one attempt in each job, a paired sign-flip permutation test over tasks otherwise,
 * and a bootstrap interval for the difference in resolved rate either way.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { Interval } from './proportion.ts';

/**
 * P(X <= k) for X ~ Binomial(n, 1/2), summed exactly term by term in log space
 * (log C(n, i) built up as a running sum), accurate to about 1e-13 for n up to 10^5.
 * @throws RangeError for counts that are not whole numbers with n >= 0.
 */
export function binomialHalfCdf(k: number, n: number): number {
  if (!Number.isInteger(k) || !Number.isInteger(n) || n < 0)
    throw new RangeError(`binomialHalfCdf: bad arguments k=${k} n=${n}`);
  if (k < 0) return 0;
  if (k >= n) return 1;
  const logHalfN = -n * Math.LN2;
  let logChoose = 0;
  let sum = Math.exp(logHalfN);
  for (let i = 1; i <= k; i++) {
    logChoose += Math.log(n - i + 1) - Math.log(i);
    sum += Math.exp(logChoose + logHalfN);
  }
  return Math.min(1, sum);
}

/**
 * McNemar's exact test (the conditional binomial test of McNemar 1947, as
 * `statsmodels.stats.contingency_tables.mcnemar(table, exact=True)` computes it):
 * with `b` tasks resolved only by the first job and `c` only by the second, under the
 * null hypothesis b ~ Binomial(b + c, 1/2); the two-sided p-value is
 * `min(1, 2 · P(X <= min(b, c)))`. Tasks both jobs resolved (or both failed) carry no
 * information and are not arguments. 1 when b + c = 0.
 */
export function mcnemarExact(b: number, c: number): number {
  if (!Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 0)
    throw new RangeError(`mcnemarExact: bad counts b=${b} c=${c}`);
  if (b + c === 0) return 1;
  return Math.min(1, 2 * binomialHalfCdf(Math.min(b, c), b + c));
}

/** One task's pass rates in the two jobs (resolved attempts / attempts, each in [0, 1]). */
export interface PairedRates {
  a: number;
  b: number;
}

/** The result of `pairedBootstrap`. */
export interface BootstrapResult {
  /** Mean over tasks of `b - a`: the second job's resolved rate minus the first's. */
  delta: number;
  /** Percentile interval of the resampled deltas (2.5% and 97.5% for 95%). */
  interval: Interval;
  /**
   * Two-sided p-value of "no difference": the share of resampled deltas, centred on the
   * observed one, at least as far from it as the observed delta is from 0
   * ((1 + count) / (1 + resamples), so never 0).
   */
  p: number;
  resamples: number;
  seed: number;
}

/**
 * A paired bootstrap over tasks (Efron & Tibshirani 1993, ch. 16, the centred test): each of
 * `resamples` draws picks as many tasks as there are, with replacement, and takes the mean of
 * their `b - a`. The generator is xoroshiro128+ (pure-rand) seeded with `seed`, so the same
 * seed gives the same interval and p-value.
 * @param confidence the interval's coverage, 0.95 by default.
 * @returns `null` when there are no tasks.
 */
export function pairedBootstrap(
  rates: readonly PairedRates[],
  options: { seed: number; resamples?: number; confidence?: number },
): BootstrapResult | null {
  const n = rates.length;
  if (n === 0) return null;
  const resamples = options.resamples ?? 10_000;
  const confidence = options.confidence ?? 0.95;
  const differences = rates.map((r) => r.b - r.a);
  const delta = differences.reduce((sum, d) => sum + d, 0) / n;
  const rng = xoroshiro128plus(options.seed);
  const deltas = new Float64Array(resamples);
  let extreme = 0;
  const observed = Math.abs(delta);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += differences[uniformInt(rng, 0, n - 1)] as number;
    const mean = sum / n;
    deltas[r] = mean;
    // A tolerance keeps ties (the common case with 0/1 rates) from depending on rounding.
    if (Math.abs(mean - delta) >= observed - 1e-12) extreme++;
  }
  deltas.sort();
  const tail = (1 - confidence) / 2;
  return {
    delta,
    interval: { low: quantile(deltas, tail), high: quantile(deltas, 1 - tail) },
    p: observed === 0 ? 1 : (1 + extreme) / (1 + resamples),
    resamples,
    seed: options.seed,
  };
}

/** The result of `pairedPermutation`. */
export interface PermutationResult {
  /** Mean over tasks of `b - a`. */
  delta: number;
  /** Two-sided p-value of "no difference" (see `pairedPermutation`). */
  p: number;
  /** True when every one of the 2^n sign assignments was counted; false for Monte Carlo. */
  exact: boolean;
  /** Sign assignments counted: 2^n when exact, the Monte Carlo draws otherwise. */
  arrangements: number;
}

/** Up to this many tasks (2^20 ≈ 10^6 sign assignments) the permutation test enumerates them all. */
export const EXACT_PERMUTATION_TASKS = 20;

/**
 * A paired sign-flip permutation test over tasks (Fisher 1935, §21; the randomization test
 * of Good, *Permutation Tests*, 2nd ed., §3.1): under "no difference" each task's difference
 * `b - a` is as likely to have either sign, so the p-value is the share of the 2^n sign
 * assignments whose mean is at least as far from 0 as the observed mean. Exact (every
 * assignment counted) up to `EXACT_PERMUTATION_TASKS` tasks; beyond, `resamples` random
 * assignments from xoroshiro128+ seeded with `seed`, with p = (1 + count) / (1 + resamples).
 * Unlike the bootstrap it is right for small n: 4 tasks all +1 give 2/16 = 0.125 (McNemar's
 * exact test on the same one-attempt data gives the same), and 1 task always gives 1.
 * @returns `null` when there are no tasks.
 */
export function pairedPermutation(
  rates: readonly PairedRates[],
  options: { seed: number; resamples?: number; exactUpTo?: number },
): PermutationResult | null {
  const n = rates.length;
  if (n === 0) return null;
  const differences = rates.map((r) => r.b - r.a);
  const total = differences.reduce((sum, d) => sum + d, 0);
  const delta = total / n;
  const observed = Math.abs(total);
  if (observed < 1e-12) return { delta, p: 1, exact: true, arrangements: 2 ** n };
  // A tolerance keeps ties (the common case with rates like 1/3) from depending on rounding.
  const atLeast = observed - 1e-9;
  if (n <= (options.exactUpTo ?? EXACT_PERMUTATION_TASKS)) {
    const arrangements = 2 ** n;
    let extreme = 0;
    for (let mask = 0; mask < arrangements; mask++) {
      let sum = 0;
      for (let i = 0; i < n; i++)
        sum += mask & (1 << i) ? -(differences[i] as number) : (differences[i] as number);
      if (Math.abs(sum) >= atLeast) extreme++;
    }
    return { delta, p: extreme / arrangements, exact: true, arrangements };
  }
  const resamples = options.resamples ?? 10_000;
  const rng = xoroshiro128plus(options.seed);
  let extreme = 0;
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++)
      sum += uniformInt(rng, 0, 1) ? -(differences[i] as number) : (differences[i] as number);
    if (Math.abs(sum) >= atLeast) extreme++;
  }
  return { delta, p: (1 + extreme) / (1 + resamples), exact: false, arrangements: resamples };
}

/** The q-quantile of sorted values, linear between order statistics (NumPy's default). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  const low = sorted[below] as number;
  return low + ((sorted[above] as number) - low) * (position - below);
}
