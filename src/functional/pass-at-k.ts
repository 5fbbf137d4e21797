/**
 * pass@k with the unbiased estimator of the Codex paper (Chen et al. 2021),
 * as human-eval, mxeval, EvalPlus and MultiPL-E compute it.
 */
import { UsageError } from '../errors.ts';

/**
 * Per problem, with `n` samples of which `c` are correct:
 * pass@k = 1 - C(n-c, k) / C(n, k), in the numerically stable product form
 * 1 - prod_{i=n-c+1}^{n} (1 - k/i); 1 when n - c < k.
 * Throws a RangeError when k > n (there is no unbiased estimate then).
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || k < 1 || c < 0 || c > n) {
    throw new RangeError(`passAtK: bad arguments n=${n} c=${c} k=${k}`);
  }
  if (k > n) throw new RangeError(`passAtK: k=${k} exceeds n=${n}`);
  if (n - c < k) return 1;
  let product = 1;
  for (let i = n - c + 1; i <= n; i++) product *= 1 - k / i;
  return 1 - product;
}

/** Default ks: human-eval's 1, 10 and 100. */
export const DEFAULT_KS = [1, 10, 100] as const;

/** Counts per task: samples and correct samples. */
export interface TaskCounts {
  n: number;
  c: number;
}

/**
 * Mean pass@k over tasks (unweighted, as every reference tool does).
 * `requested` ks: each must be at most the fewest samples of any task, else a
 * UsageError says so (human-eval and mxeval silently drop such a k;
 * MultiPL-E silently reports 1.0). Without `requested`, every default k that
 * all tasks have enough samples for.
 */
export function passAtKSummary(
  counts: Iterable<TaskCounts>,
  requested?: readonly number[],
): Record<string, number> {
  const list = [...counts];
  if (list.length === 0) return {};
  const fewest = Math.min(...list.map((task) => task.n));
  let ks: number[];
  if (requested && requested.length > 0) {
    const tooLarge = requested.filter((k) => k > fewest);
    if (tooLarge.length > 0) {
      throw new UsageError(
        `pass@${tooLarge.join(', pass@')} cannot be estimated: the task with the fewest samples has ${fewest}, and pass@k needs at least k samples per task`,
      );
    }
    ks = [...new Set(requested)].sort((a, b) => a - b);
  } else {
    ks = DEFAULT_KS.filter((k) => k <= fewest);
  }
  const summary: Record<string, number> = {};
  for (const k of ks) {
    let total = 0;
    for (const task of list) total += passAtK(task.n, task.c, k);
    summary[`pass@${k}`] = total / list.length;
  }
  return summary;
}

/** Parses `--pass-at 1,10,100`. */
export function parseKs(text: string): number[] {
  const ks = text.split(',').map((part) => part.trim());
  const parsed = ks.map(Number);
  if (ks.some((part) => !/^\d+$/.test(part)) || parsed.some((k) => k < 1)) {
    throw new UsageError(`--pass-at: expected positive integers separated by commas, got "${text}"`);
  }
  return parsed;
}
