/**
 * Confidence intervals for a proportion (a resolved rate: resolved trials out of trials).
 */

/** The standard normal quantile for a two-sided 95% interval, z(0.975). */
export const Z_95 = 1.959963984540054;

/** A closed interval of rates in [0, 1]. */
export interface Interval {
  low: number;
  high: number;
}

/**
 * The Wilson score interval (Wilson 1927; Newcombe 1998, method 3, without continuity
 * correction): for `successes` out of `n`,
 * `(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)` with `p = successes/n`.
 * Unlike the normal ("Wald") interval it stays inside [0, 1] and is not empty at 0 or n.
 * @param z the normal quantile; the default gives a two-sided 95% interval.
 * @returns `null` when `n` is 0 (no rate to bound).
 * @throws RangeError when the counts are not whole numbers with 0 <= successes <= n.
 */
export function wilsonInterval(successes: number, n: number, z = Z_95): Interval | null {
  if (!Number.isInteger(successes) || !Number.isInteger(n) || successes < 0 || successes > n)
    throw new RangeError(`wilsonInterval: bad counts ${successes}/${n}`);
  return wilsonIntervalOfRate(n === 0 ? 0 : successes / n, n, z);
}

/**
 * The Wilson score interval of a rate `p` observed over `n` units, the formula of
 * `wilsonInterval` with `p` given: for a mean of per-unit rates in [0, 1] (a leaderboard's mean
 * pass rate per task, n = tasks) as well as for successes / n.
 * @returns `null` when `n` is 0.
 * @throws RangeError when `p` is outside [0, 1] or `n` is not a whole number >= 0.
 */
export function wilsonIntervalOfRate(p: number, n: number, z = Z_95): Interval | null {
  if (!(p >= 0 && p <= 1) || !Number.isInteger(n) || n < 0)
    throw new RangeError(`wilsonIntervalOfRate: bad rate ${p} over ${n}`);
  if (n === 0) return null;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 and 1 the formula gives exactly 0 and 1 up to rounding: pin them.
  return {
    low: p === 0 ? 0 : Math.max(0, center - half),
    high: p === 1 ? 1 : Math.min(1, center + half),
  };
}
