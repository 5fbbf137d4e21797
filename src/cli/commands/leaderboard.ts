/**
 * `berth leaderboard [JOBS_DIR]`: agent × model rows per dataset over every job of a folder
 * (src/results/leaderboard.ts), on the terminal, as JSON or as an HTML page.
 */
import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

export const registerLeaderboard: RegisterCommand = (program: Command) => {
  program
    .command('leaderboard')
    .description(
      'Rank agent × model per dataset over every job in a folder: resolved rate, 95% Wilson interval, cost and time.',
    )
    .argument('[jobs-dir]', 'folder of job folders', 'jobs')
    .option('--json', 'print the leaderboard as JSON')
    .option('--html <file>', 'also write the leaderboard as an HTML page')
    .action(async (jobsDir: string, options: { json?: boolean; html?: string }) => {
      const { buildLeaderboard } = await import('../../results/leaderboard.ts');
      const data = await buildLeaderboard(jobsDir);
      if (options.html) {
        const { renderPage } = await import('../../reporters/html/page.ts');
        const { writeFileAtomic } = await import('../../util/atomic-write.ts');
        await writeFileAtomic(
          options.html,
          renderPage({ title: 'berth: leaderboard', kind: 'leaderboard', source: 'inline', data }),
        );
        process.stderr.write(`leaderboard: ${options.html}\n`);
      }
      if (options.json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      else {
        const { formatLeaderboard } = await import('../../reporters/leaderboard-text.ts');
        process.stdout.write(formatLeaderboard(data));
      }
    });
};
