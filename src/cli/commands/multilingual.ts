/**
 * `berth multilingual run -p DATASET [-a oracle|nop|predictions] [--predictions FILE]
 *  [-i ID]... [--jobs-dir DIR] [--job-name NAME] [--json]`: runs a multilingual-demo
 * dataset (sample_task.json + sample_tasks/) with berth's own grading and prints one line
 * per task and the results by task type and language.
 *
 * `berth multilingual build SOURCES -o DATASET`: builds tasks from source folders
 * (base/, fix/, tests/, task.json), deriving f2p/p2p/p2f/f2f by running the tests.
 */
import type { Command } from 'commander';
import { UsageError } from '../../errors.ts';
import { didYouMean } from '../../util/did-you-mean.ts';
import type { RegisterCommand } from './index.ts';

export const registerMultilingual: RegisterCommand = (program: Command) => {
  const group = program
    .command('multilingual')
    .description("The multilingual SWE demo's task format: run and build tasks.");
  group
    .command('run')
    .description(
      'Run a multilingual dataset (as berth run does) and grade it with its config.json (parser + test lists).',
    )
    .requiredOption('-p, --path <dir>', 'dataset folder holding sample_task.json and sample_tasks/')
    .option('-a, --agent <name>', 'oracle | nop | predictions', 'oracle')
    .option('--predictions <file>', 'SWE-bench predictions (instance_id, model_patch), JSON or JSONL')
    .option('-i, --include <id...>', 'only these instance ids')
    .option(
      '--env <kind>',
      "local (berth's sandboxed local environment) | docker (the task Dockerfile)",
      'local',
    )
    .option(
      '--images-dir <dir>',
      "docker: folder of the tasks' image archives (tar_path); default sample_images/ in the dataset",
    )
    .option('--jobs-dir <dir>', 'where job folders are written', 'jobs')
    .option('--job-name <name>', 'job folder name (default: a timestamp)')
    .option('--json', 'print the job result as one JSON document')
    .action(
      async (options: {
        path: string;
        agent: string;
        predictions?: string;
        include?: string[];
        env: string;
        imagesDir?: string;
        jobsDir: string;
        jobName?: string;
        json?: boolean;
      }) => {
        if (!['oracle', 'nop', 'predictions'].includes(options.agent)) {
          throw new UsageError(
            `unknown agent ${JSON.stringify(options.agent)}${didYouMean(options.agent, ['oracle', 'nop', 'predictions'])}: use oracle, nop or predictions`,
          );
        }
        if (!['local', 'docker'].includes(options.env))
          throw new UsageError(
            `unknown --env ${JSON.stringify(options.env)}${didYouMean(options.env, ['local', 'docker'])}: use local or docker`,
          );
        const { runMultilingualJob } = await import('../../tasks/multilingual/run.ts');
        const { defaultJobName } = await import('../../jobs/names.ts');
        const { formatCategoryReport } = await import('../../reporters/by-category.ts');
        const started = performance.now();
        const result = await runMultilingualJob({
          dataset: options.path,
          agent: options.agent as 'oracle' | 'nop' | 'predictions',
          predictionsFile: options.predictions,
          include: options.include,
          environment: options.env as 'local' | 'docker',
          ...(options.imagesDir ? { imagesDir: options.imagesDir } : {}),
          jobsDir: options.jobsDir,
          jobName: options.jobName ?? defaultJobName(),
          onTrial: options.json
            ? undefined
            : (row) => {
                const counts = row.counts
                  ? `f2p ${row.counts.f2p?.passed}/${row.counts.f2p?.total} p2p ${row.counts.p2p?.passed}/${row.counts.p2p?.total}`
                  : '';
                const note = [
                  row.discarded_test_files.length
                    ? `discarded ${row.discarded_test_files.length} test file(s)`
                    : '',
                  row.tampering ? 'tampering' : '',
                  row.exception ? row.exception.type : '',
                ]
                  .filter(Boolean)
                  .join('; ');
                process.stdout.write(
                  `${row.resolved ? 'RESOLVED  ' : 'unresolved'} ${row.instance_id.padEnd(40)} ${row.task_type.padEnd(3)} ${row.language.padEnd(11)} ${counts.padEnd(22)} ${note}\n`,
                );
              },
        });
        if (options.json) {
          process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
          return;
        }
        process.stdout.write(`\n${formatCategoryReport(result.trials, ['task_type', 'language'])}`);
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        process.stdout.write(
          `resolved ${result.resolved}/${result.total} (${((100 * result.resolved) / Math.max(1, result.total)).toFixed(1)}%) in ${seconds}s; ${result.isolated ? `tests ran without network (${result.environment})` : 'not network-isolated (no sandbox here)'}\nresults: ${result.job_dir}\n`,
        );
      },
    );
  group
    .command('build')
    .description('Build tasks from source folders, deriving the test lists by running the tests.')
    .argument('<sources>', 'folder of task sources (one folder per task: task.json, base/, fix/, tests/)')
    .requiredOption('-o, --out <dir>', 'dataset folder to write (sample_task.json, sample_tasks/)')
    .action(async (sources: string, options: { out: string }) => {
      const { buildDataset } = await import('../../tasks/multilingual/author.ts');
      const built = await buildDataset(sources, options.out);
      for (const task of built) {
        const l = task.entry.ut_results;
        process.stdout.write(
          `${task.entry.instance_id.padEnd(40)} ${task.entry.task_type.padEnd(3)} ${task.entry.language.padEnd(11)} f2p ${l.f2p_tests.length} p2p ${l.p2p_tests.length} p2f ${l.p2f_tests.length} f2f ${l.f2f_tests.length}\n`,
        );
      }
      process.stdout.write(`built ${built.length} tasks into ${options.out}\n`);
    });
};
