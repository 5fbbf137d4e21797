/** `berth leaderboard` on the terminal: a table per dataset, best resolved rate first. */
import type { LeaderboardData } from '../results/leaderboard.ts';
import { plainTable } from './plain-table.ts';

const pct = (value: number | null | undefined) =>
  value === null || value === undefined ? '-' : `${(100 * value).toFixed(1)}%`;

export function formatLeaderboard(data: LeaderboardData): string {
  const out: string[] = [];
  if (data.datasets.length === 0) out.push(`no finished trial in ${data.jobs_dir}`);
  for (const { dataset, rows } of data.datasets) {
    out.push(`dataset ${dataset}`);
    out.push(
      plainTable(
        [
          '#',
          'agent',
          'model',
          'resolved',
          'rate',
          '95% Wilson interval',
          'tasks',
          'cost',
          's/trial',
          'jobs',
        ],
        rows.map((row, i) => [
          String(i + 1),
          row.agent,
          row.model ?? '-',
          `${row.rate.resolved}/${row.rate.n}`,
          pct(row.rate.rate),
          row.rate.interval ? `${pct(row.rate.interval.low)} - ${pct(row.rate.interval.high)}` : '-',
          String(row.tasks),
          row.cost_usd === null ? '-' : `$${row.cost_usd.toFixed(2)}`,
          row.mean_trial_sec === null ? '-' : row.mean_trial_sec.toFixed(1),
          `${row.jobs.join(', ')}${row.running ? ' (running)' : ''}`,
        ]),
        [0, 3, 4, 6, 7, 8],
      ),
    );
    out.push('');
  }
  for (const skipped of data.skipped) out.push(`skipped ${skipped.name}: ${skipped.error}`);
  return `${out.join('\n').trimEnd()}\n`;
}
