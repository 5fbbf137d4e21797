import { describe, expect, it } from 'vitest';
import {
  binomialHalfCdf,
  mcnemarExact,
  pairedBootstrap,
  pairedPermutation,
  quantile,
} from '../../src/stats/paired.ts';
import { wilsonInterval } from '../../src/stats/proportion.ts';

/** P(X <= k), X ~ Binomial(n, 1/2), as an exact fraction (BigInt), for checking the float sum. */
function exactHalfCdf(k: number, n: number): number {
  let choose = 1n;
  let sum = 1n;
  for (let i = 1; i <= k; i++) {
    choose = (choose * BigInt(n - i + 1)) / BigInt(i);
    sum += choose;
  }
  // Scale before dividing so the quotient keeps 15 significant digits.
  const scale = 10n ** 18n;
  return Number((sum * scale) / 2n ** BigInt(n)) / 1e18;
}

describe('Wilson score interval', () => {
  it('matches Newcombe (1998), Table I, method 3 (score interval without continuity correction)', () => {
    // Newcombe RG. Two-sided confidence intervals for the single proportion: comparison of seven
    // methods. Statistics in Medicine 17:857-872 (1998), the four worked examples.
    const published: Array<[number, number, number, number]> = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0.0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [x, n, low, high] of published) {
      const interval = wilsonInterval(x, n);
      expect(interval?.low).toBeCloseTo(low, 4);
      expect(interval?.high).toBeCloseTo(high, 4);
    }
  });

  it('stays inside [0, 1], is symmetric in successes and failures, and has no interval for n = 0', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(wilsonInterval(10, 10)).toEqual({ low: expect.closeTo(0.7225, 4), high: 1 });
    const a = wilsonInterval(3, 17);
    const b = wilsonInterval(14, 17);
    expect(a?.low).toBeCloseTo(1 - (b?.high as number), 12);
    expect(() => wilsonInterval(5, 4)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 4)).toThrow(RangeError);
  });
});

describe('exact binomial and McNemar', () => {
  it('the cumulative binomial equals the exact fraction and the printed tables', () => {
    for (const [k, n] of [
      [0, 1],
      [2, 10],
      [5, 20],
      [13, 40],
      [49, 100],
      [400, 1000],
    ] as const)
      expect(binomialHalfCdf(k, n)).toBeCloseTo(exactHalfCdf(k, n), 12);
    // Cumulative binomial tables (p = 0.5): n = 10, k = 2 -> 0.0547; k = 3 -> 0.1719; n = 20, k = 5 -> 0.0207.
    expect(binomialHalfCdf(2, 10)).toBeCloseTo(0.0547, 4);
    expect(binomialHalfCdf(3, 10)).toBeCloseTo(0.1719, 4);
    expect(binomialHalfCdf(5, 20)).toBeCloseTo(0.0207, 4);
    expect(binomialHalfCdf(-1, 5)).toBe(0);
    expect(binomialHalfCdf(5, 5)).toBe(1);
  });

  it("McNemar's exact p-value is twice the smaller tail, capped at 1", () => {
    // b = 1, c = 9: 2 * (1 + 10) / 1024, the exact binomial test statsmodels' mcnemar(exact=True) runs.
    expect(mcnemarExact(1, 9)).toBeCloseTo((2 * 11) / 1024, 15);
    expect(mcnemarExact(9, 1)).toBe(mcnemarExact(1, 9));
    expect(mcnemarExact(0, 6)).toBeCloseTo(2 / 64, 15);
    expect(mcnemarExact(0, 5)).toBeCloseTo(2 / 32, 15);
    expect(mcnemarExact(3, 3)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
    // Not significant at 5% with 5 discordant pairs all one way; significant with 6.
    expect(mcnemarExact(0, 5)).toBeGreaterThan(0.05);
    expect(mcnemarExact(0, 6)).toBeLessThan(0.05);
  });
});

describe('paired bootstrap', () => {
  const rates = [
    ...Array.from({ length: 30 }, () => ({ a: 0, b: 1 })),
    ...Array.from({ length: 10 }, () => ({ a: 1, b: 0 })),
    ...Array.from({ length: 60 }, (_, i) => ({ a: i % 2, b: i % 2 })),
  ];

  it('is reproducible from its seed and differs with another seed', () => {
    // Pass rates of three attempts: many distinct means, so another seed moves the interval.
    const varied = Array.from({ length: 50 }, (_, i) => ({ a: (i % 4) / 3, b: ((i * 7) % 4) / 3 }));
    const one = pairedBootstrap(varied, { seed: 7, resamples: 2000 });
    const again = pairedBootstrap(varied, { seed: 7, resamples: 2000 });
    const other = pairedBootstrap(varied, { seed: 8, resamples: 2000 });
    expect(one).toEqual(again);
    // Quantiles of a discrete distribution often coincide; the p-value counts every resample.
    expect(one?.p).not.toBe(other?.p);
    expect(one?.seed).toBe(7);
  });

  it('centres on the observed difference, with an interval of about ±1.96 standard errors', () => {
    const result = pairedBootstrap(rates, { seed: 1, resamples: 20_000 });
    expect(result?.delta).toBeCloseTo(0.2, 12);
    // Differences are +1 (30), -1 (10), 0 (60): sd = sqrt(0.4 - 0.04) = 0.6, se = 0.06.
    expect(result?.interval.low).toBeCloseTo(0.2 - 1.96 * 0.06, 1);
    expect(result?.interval.high).toBeCloseTo(0.2 + 1.96 * 0.06, 1);
    expect(result?.p).toBeLessThan(0.01);
    expect(pairedBootstrap([{ a: 1, b: 1 }], { seed: 1 })?.p).toBe(1);
    expect(pairedBootstrap([], { seed: 1 })).toBeNull();
  });

  it("agrees with McNemar's test on the same one-attempt data", () => {
    // 8 flips one way, 1 the other, 11 unchanged: McNemar p = 2 * P(X <= 1 | 9) = 0.0391.
    const data = [
      ...Array.from({ length: 8 }, () => ({ a: 0, b: 1 })),
      { a: 1, b: 0 },
      ...Array.from({ length: 11 }, () => ({ a: 1, b: 1 })),
    ];
    expect(mcnemarExact(1, 8)).toBeCloseTo(0.0391, 4);
    const boot = pairedBootstrap(data, { seed: 3, resamples: 20_000 });
    expect(boot?.p).toBeGreaterThan(0.005);
    expect(boot?.p).toBeLessThan(0.08);
  });

  it('quantiles interpolate as NumPy does', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([5], 0.975)).toBe(5);
  });
});

describe('the paired sign-flip permutation test over tasks', () => {
  const same = (n: number, a: number, b: number) => Array.from({ length: n }, () => ({ a, b }));

  it('gives the exact small-n values the bootstrap cannot: 4 tasks all +1 -> 2/16', () => {
    // Every resample of 4 identical differences is identical: the bootstrap falls to its floor.
    expect(pairedBootstrap(same(4, 0, 1), { seed: 1 })?.p).toBeCloseTo(1 / 10_001, 10);
    const result = pairedPermutation(same(4, 0, 1), { seed: 1 });
    expect(result).toEqual({ delta: 1, p: 0.125, exact: true, arrangements: 16 });
    // The same as McNemar's exact test on the one-attempt data (4 discordant, 0 the other way).
    expect(result?.p).toBe(mcnemarExact(0, 4));
    expect(pairedPermutation(same(4, 1, 0), { seed: 1 })?.p).toBe(0.125);
  });

  it('never calls 1 task significant, and no difference gives 1', () => {
    expect(pairedPermutation([{ a: 0, b: 1 }], { seed: 1 })?.p).toBe(1);
    expect(pairedPermutation([{ a: 0.5, b: 1 }], { seed: 1 })?.p).toBe(1);
    expect(pairedPermutation(same(5, 1, 1), { seed: 1 })?.p).toBe(1);
    expect(pairedPermutation([], { seed: 1 })).toBeNull();
  });

  it('counts hand-enumerated arrangements of unequal differences', () => {
    // Differences +1, +0.5, -0.5 (sum 1): of the 8 sign flips, sums are ±1 (4: ±(1+.5-.5),
    // ±(1-.5+.5)), ±2 (2), ±0 (2); |sum| >= 1 in 6 -> p = 0.75.
    const rates = [
      { a: 0, b: 1 },
      { a: 0, b: 0.5 },
      { a: 0.5, b: 0 },
    ];
    expect(pairedPermutation(rates, { seed: 1 })?.p).toBe(0.75);
    // 6 tasks all +1: 2/64 = 0.03125, the smallest n where all one way reaches p < 0.05.
    expect(pairedPermutation(same(6, 0, 1), { seed: 1 })?.p).toBe(0.03125);
  });

  it('agrees with the exact binomial sign test for 0/1 data (McNemar) at n = 9 and 20', () => {
    const data = [...same(8, 0, 1), { a: 1, b: 0 }, ...same(11, 1, 1)];
    expect(pairedPermutation(data, { seed: 1 })?.p).toBeCloseTo(mcnemarExact(1, 8), 12);
    expect(pairedPermutation(data, { seed: 1 })?.arrangements).toBe(2 ** 20);
  });

  it('beyond 20 tasks: Monte Carlo from the seed, close to the exact value', () => {
    // 30 tasks: 20 +1, 10 -1 -> McNemar p = 2 * P(X <= 10 | 30) = 0.0987.
    const data = [...same(20, 0, 1), ...same(10, 1, 0)];
    const one = pairedPermutation(data, { seed: 5, resamples: 20_000 });
    expect(one?.exact).toBe(false);
    expect(one?.p).toBeCloseTo(mcnemarExact(10, 20), 1);
    expect(Math.abs((one?.p ?? 0) - mcnemarExact(10, 20))).toBeLessThan(0.015);
    expect(pairedPermutation(data, { seed: 5, resamples: 20_000 })).toEqual(one);
  });
});
