/**
 * `berth compare JOB_A JOB_B [...]`: each job compared with the first (src/results/compare.ts),
 * on the terminal, as JSON (--json) or as an HTML page (--html FILE).
 */
import type { Command } from 'commander';
import { UsageError } from '../../errors.ts';
import type { RegisterCommand } from './index.ts';

export const registerCompare: RegisterCommand = (program: Command) => {
  program
    .command('compare')
    .description(
      'Compare jobs with the first: tasks that flipped, the difference in resolved rate with a paired test (McNemar exact, or a seeded bootstrap for several attempts) and a bootstrap interval, per repository and language.',
    )
    .argument('<job-dirs...>', 'two or more job folders; the first is the baseline')
    .option('--json', 'print the comparison as JSON')
    .option('--html <file>', 'also write the comparison as an HTML page')
    .option('--seed <n>', 'seed of the bootstrap', '1')
    .option(
      '--resamples <n>',
      'bootstrap resamples (the interval; the permutation test beyond 20 tasks)',
      '10000',
    )
    .action(
      async (
        jobDirs: string[],
        options: { json?: boolean; html?: string; seed: string; resamples: string },
      ) => {
        if (jobDirs.length < 2)
          throw new UsageError('compare needs two or more job folders (the first is the baseline)');
        if (!/^\d+$/.test(options.seed))
          throw new UsageError(`--seed expects a whole number, got ${JSON.stringify(options.seed)}`);
        if (!/^\d+$/.test(options.resamples) || Number(options.resamples) < 100)
          throw new UsageError(
            `--resamples expects a whole number of at least 100, got ${JSON.stringify(options.resamples)}`,
          );
        const { readJob } = await import('../../results/read-job.ts');
        const { compareJobs } = await import('../../results/compare.ts');
        const jobs = await Promise.all(jobDirs.map((dir) => readJob(dir)));
        const names = jobs.map((job) => job.name);
        if (new Set(names).size < names.length)
          for (const [i, job] of jobs.entries())
            job.name = names.filter((n) => n === job.name).length > 1 ? (jobDirs[i] as string) : job.name;
        const result = compareJobs(jobs, {
          seed: Number(options.seed),
          resamples: Number(options.resamples),
        });
        if (options.html) {
          const { renderPage } = await import('../../reporters/html/page.ts');
          const { writeFileAtomic } = await import('../../util/atomic-write.ts');
          await writeFileAtomic(
            options.html,
            renderPage({
              title: `berth: ${names.join(' vs ')}`,
              kind: 'compare',
              source: 'inline',
              data: result,
            }),
          );
          process.stderr.write(`comparison: ${options.html}\n`);
        }
        if (options.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        else {
          const { formatComparison } = await import('../../reporters/compare-text.ts');
          process.stdout.write(formatComparison(result));
        }
      },
    );
};
