/**
 * `berth leaderboard` on the terminal: a table per dataset, best score first. The score is the
 * mean pass rate per task, its interval over tasks; infrastructure errors are a column of their
 * own, left out of the score (src/results/leaderboard.ts).
 */
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
          'tasks',
          'resolved',
          'score',
          '95% interval (tasks)',
          'errors',
          'cost',
          's/trial',
          'jobs',
        ],
        rows.map((row, i) => [
          String(i + 1),
          row.agent,
          row.model ?? '-',
          String(row.score.tasks),
          `${row.resolved}/${row.trials}`,
          pct(row.score.mean),
          row.score.interval ? `${pct(row.score.interval.low)} - ${pct(row.score.interval.high)}` : '-',
          String(row.errors),
          row.cost_usd === null ? '-' : `$${row.cost_usd.toFixed(2)}`,
          row.mean_trial_sec === null ? '-' : row.mean_trial_sec.toFixed(1),
          `${row.jobs.join(', ')}${row.running ? ' (running)' : ''}`,
        ]),
        [0, 3, 4, 5, 7, 8, 9],
      ),
    );
    out.push('');
  }
  if (data.datasets.length > 0)
    out.push(
      'score: mean over tasks of resolved / scored trials; interval: 95% Wilson over tasks; errors: trials with no verdict for infrastructure reasons, left out of the score',
    );
  for (const skipped of data.skipped) out.push(`skipped ${skipped.name}: ${skipped.error}`);
  return `${out.join('\n').trimEnd()}\n`;
}
