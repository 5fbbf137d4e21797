/**
 * The fast JVM path and the reference path (mxeval's per-sample kotlinc + java -jar) give the same
 * verdicts on a spread of 20 of mxeval's MBKP example samples, and the canonical solutions of those
 * problems pass. Reads MBKP from `$BERTH_DATA/functional/mbxp/` (default ../shared/data); skipped
 * when the data or the toolchains are absent. Slow (each reference sample starts kotlinc cold).
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import { runReference } from '../../src/functional/jvm/reference.ts';
import { findJdk, findKotlin } from '../../src/functional/jvm/toolchain.ts';
import { type MbxpProblem, mbkpFiles, readJsonl, toJvmSamples } from '../helpers/mbxp-jsonl.ts';

const files = mbkpFiles();
const haveData = existsSync(files.problems) && existsSync(files.samples);
if (!haveData) console.warn(`skipping MBKP reference test: no ${files.problems} (set BERTH_DATA)`);
const toolchains = await Promise.all([findJdk(), findKotlin()]).then(
  () => true,
  (err: Error) => {
    console.warn(`skipping MBKP reference test: ${err.message}`);
    return false;
  },
);

describe.skipIf(!haveData || !toolchains)('MBKP: fast path vs reference path', () => {
  it('gives identical verdicts on 20 example samples', async () => {
    const problems = readJsonl<MbxpProblem>(files.problems);
    const all = toJvmSamples(problems, readJsonl(files.samples), 'kotlin');
    const step = all.length / 20;
    const subset = Array.from({ length: 20 }, (_, i) => all[Math.floor(i * step)]!);
    const fast = await runFast(subset, { workers: 2 });
    const reference = await runReference(subset, { workers: 2 });
    const pass = (s: string) => s === 'passed';
    const table = subset.map(
      (s, i) => `${s.key}: fast ${fast[i]!.status}, reference ${reference[i]!.status}`,
    );
    expect(fast.map((v) => pass(v.status))).toEqual(reference.map((v) => pass(v.status)));
    // The same kind of failure too (compile error vs test failure).
    expect(
      fast.map((v) => v.status),
      table.join('\n'),
    ).toEqual(reference.map((v) => v.status));
    // Both outcomes occur in the subset, so agreement is not trivial.
    expect(new Set(fast.map((v) => v.status)).size).toBeGreaterThan(1);
  }, 1_200_000);
});
