/**
 * `berth report JOB_DIR... [--by KEYS] [--json] [--html]`: results of finished jobs grouped by
 * category (task type, language, repository), one section per job (never pooled: comparing jobs
 * is `berth compare`), or each job's HTML report (`<job>/report.html`, src/reporters/html/report.ts).
 */
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../errors.ts';
import { CATEGORY_KEYS } from '../../results/model.ts';
import { didYouMean } from '../../util/did-you-mean.ts';
import type { RegisterCommand } from './index.ts';

/** Parses `--by`: comma-separated keys, each one of CATEGORY_KEYS. */
export function parseByKeys(text: string): string[] {
  const keys = text
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  const known = new Set<string>(CATEGORY_KEYS);
  const unknown = keys.filter((key) => !known.has(key));
  if (keys.length === 0 || unknown.length > 0)
    throw new UsageError(
      `--by ${unknown.length > 0 ? `does not know ${unknown.map((key) => `${JSON.stringify(key)}${didYouMean(key, CATEGORY_KEYS)}`).join(', ')}` : 'needs at least one key'}; the keys are ${CATEGORY_KEYS.join(', ')}`,
    );
  return [...new Set(keys)];
}

export const registerReport: RegisterCommand = (program: Command) => {
  program
    .command('report')
    .description(
      "Results of finished jobs grouped by task type, language or repository, one section per job (berth compare compares jobs); with --html, write each job's report.html.",
    )
    .argument('<job-dirs...>', 'job folders (<jobs-dir>/<job-name>)')
    .option('--by <keys>', `comma-separated category keys: ${CATEGORY_KEYS.join(', ')}`, 'task_type,language')
    .option('--json', 'print the groups as JSON')
    .option(
      '--html',
      'write <job>/report.html for each job (the page berth run writes at the end) and print its path',
    )
    .action(async (jobDirs: string[], options: { by: string; json?: boolean; html?: boolean }) => {
      const keys = parseByKeys(options.by);
      if (options.html) {
        const { writeJobReport } = await import('../../reporters/html/report.ts');
        for (const dir of jobDirs) process.stdout.write(`report: ${await writeJobReport(dir)}\n`);
        return;
      }
      const { readCategoryRows } = await import('../../reporters/read-rows.ts');
      const { formatJobsByCategory, groupJobsByCategory } = await import('../../reporters/by-category.ts');
      const { readJob } = await import('../../results/read-job.ts');
      // Each job is its own section: two jobs (two agents, two models) are never pooled into one table.
      const jobs = await Promise.all(
        jobDirs.map(async (dir) => {
          const [rows, job] = await Promise.all([readCategoryRows(dir, keys), readJob(dir)]);
          return { job: basename(resolve(dir)), dir, agent: job.agent, model: job.model, rows };
        }),
      );
      if (options.json) process.stdout.write(`${JSON.stringify(groupJobsByCategory(jobs, keys), null, 2)}\n`);
      else process.stdout.write(formatJobsByCategory(jobs, keys));
    });
};
