/**
 * `berth compare` on the terminal: the jobs with their rates and intervals, then for each job
 * compared with the first: the difference, its interval and test, the verdict, the tasks that
 * flipped each way, and the same per repository and language.
 */
import type { CompareResult, GroupDifference } from '../results/compare.ts';
import { plainTable } from './plain-table.ts';

const pct = (value: number | null | undefined) =>
  value === null || value === undefined ? '-' : `${(100 * value).toFixed(1)}%`;
const pts = (value: number | null | undefined) =>
  value === null || value === undefined ? '-' : `${value > 0 ? '+' : ''}${(100 * value).toFixed(1)}`;
const pValue = (p: number | null) => (p === null ? '-' : p < 0.0001 ? p.toExponential(1) : p.toFixed(4));

function groupTable(key: string, groups: readonly GroupDifference[], a: string, b: string): string {
  return plainTable(
    [key, 'tasks', a, b, 'diff (pts)', '95% interval (pts)', 'p'],
    groups.map((g) => [
      g.value,
      String(g.shared_tasks),
      pct(g.rate_a),
      pct(g.rate_b),
      pts(g.delta),
      g.interval ? `${pts(g.interval.low)} to ${pts(g.interval.high)}` : '-',
      pValue(g.p),
    ]),
    [1, 2, 3, 4, 6],
  );
}

export function formatComparison(result: CompareResult): string {
  const out: string[] = [];
  out.push(
    plainTable(
      ['job', 'agent', 'model', 'dataset', 'resolved', 'rate', '95% Wilson interval'],
      result.jobs.map((job) => [
        job.name,
        job.agent ?? '-',
        job.model ?? '-',
        job.dataset ?? '-',
        `${job.rate.resolved}/${job.rate.n}`,
        pct(job.rate.rate),
        job.rate.interval ? `${pct(job.rate.interval.low)} - ${pct(job.rate.interval.high)}` : '-',
      ]),
      [4, 5],
    ),
  );
  for (const c of result.comparisons) {
    out.push('');
    out.push(
      `${c.b} vs ${c.a} over ${c.shared_tasks} shared task(s)${c.only_in_a + c.only_in_b > 0 ? ` (${c.only_in_a} only in ${c.a}, ${c.only_in_b} only in ${c.b}, left out)` : ''}:`,
    );
    if (c.delta !== null) {
      const discordant = c.discordant
        ? `, ${c.discordant.only_a} resolved only by ${c.a}, ${c.discordant.only_b} only by ${c.b}`
        : '';
      out.push(
        `  resolved ${pct(c.rate_a)} -> ${pct(c.rate_b)}: ${pts(c.delta)} pts, 95% bootstrap interval ${pts(c.interval?.low)} to ${pts(c.interval?.high)} pts`,
      );
      out.push(`  ${c.test}: p = ${pValue(c.p)}${discordant}`);
    }
    out.push(`  ${c.verdict}`);
    const flips = (list: typeof c.gained) =>
      list.length === 0
        ? 'none'
        : list.map((f) => (c.single_attempt ? f.task : `${f.task} (${f.a} -> ${f.b})`)).join(', ');
    out.push(`  now resolved (${c.gained.length}): ${flips(c.gained)}`);
    out.push(`  no longer resolved (${c.lost.length}): ${flips(c.lost)}`);
    for (const key of ['repository', 'language'] as const)
      if (c.by[key].length > 1) {
        out.push('');
        out.push(
          groupTable(key, c.by[key], c.a, c.b)
            .split('\n')
            .map((line) => `  ${line}`)
            .join('\n'),
        );
      }
  }
  out.push('');
  out.push(`bootstrap: seed ${result.seed}, ${result.resamples} resamples (--seed N to repeat or vary)`);
  return `${out.join('\n')}\n`;
}
