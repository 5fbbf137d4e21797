/**
 * `berth demo` (`npm run demo`): the bundled sample with gold and the three
 * negative controls. See docs/demo.md.
 */
import type { RegisterCommand } from './index.ts';

export const registerDemo: RegisterCommand = (program) => {
  program
    .command('demo')
    .description(
      'Run the bundled sample (examples/swe-dockerless.jsonl): gold and the empty, cross and partial controls; checks prerequisites first.',
    )
    .option('-n, --concurrency <n>', 'trials at the same time', '2')
    .option('--jobs-dir <dir>', 'keep the trial folders here (default: a temporary folder, removed)')
    .option(
      '-p, --path <dataset>',
      'another dataset to run instead of the sample (gold and the three controls)',
    )
    .option('--repos <dir>', 'folder of git mirrors for rows without a snapshot')
    .action(async (options: { concurrency: string; jobsDir?: string; path?: string; repos?: string }) => {
      const { demoPassed, runDemo } = await import('../../datasets/demo.ts');
      const { UsageError } = await import('../../errors.ts');
      const concurrency = Number(options.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new UsageError('-n expects a positive whole number');
      const runs = await runDemo({
        concurrency,
        ...(options.jobsDir ? { jobsDir: options.jobsDir } : {}),
        ...(options.path ? { dataset: options.path } : {}),
        ...(options.repos ? { reposDir: options.repos } : {}),
      });
      process.exitCode = demoPassed(runs) ? 0 : 1;
    });
};
