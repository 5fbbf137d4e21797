/**
 * `berth report JOB_DIR... [--by task_type,language] [--json]`: results grouped by
 * category. Reads each job's `result.json` (rows with `task_type`/`language`, as
 * `berth multilingual run` writes them) or, failing that, the trial folders'
 * `result.json` files (Harbor's field names; categories from `metadata`).
 */
import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

export const registerReport: RegisterCommand = (program: Command) => {
  program
    .command('report')
    .description('Results of finished jobs grouped by task type and language (or other fields).')
    .argument('<job-dirs...>', 'job folders')
    .option('--by <keys>', 'comma-separated category keys', 'task_type,language')
    .option('--json', 'print the groups as JSON')
    .action(async (jobDirs: string[], options: { by: string; json?: boolean }) => {
      const { readCategoryRows } = await import('../../reporters/read-rows.ts');
      const { formatCategoryReport, groupByCategory } = await import('../../reporters/by-category.ts');
      const keys = options.by
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean);
      const rows = (await Promise.all(jobDirs.map((dir) => readCategoryRows(dir, keys)))).flat();
      if (options.json) process.stdout.write(`${JSON.stringify(groupByCategory(rows, keys), null, 2)}\n`);
      else process.stdout.write(formatCategoryReport(rows, keys));
    });
};
