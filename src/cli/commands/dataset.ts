/**
 * `berth dataset build|validate|controls`: authoring SWE-bench / DockerLess
 * datasets. See docs/authoring-datasets.md.
 */
import type { RegisterCommand } from './index.ts';

export const registerDataset: RegisterCommand = (program) => {
  const dataset = program
    .command('dataset')
    .description(
      'Author SWE-bench / DockerLess datasets: build rows, validate them, write negative controls.',
    );

  dataset
    .command('build')
    .description(
      'Build rows from instance folders (instance.json + repo/ fix/ tests/) or instance.json specs (git base with --repos), deriving FAIL_TO_PASS/PASS_TO_PASS by running the tests.',
    )
    .argument('<spec...>', 'instance folders, folders of them, or instance.json files')
    .requiredOption('-o, --output <file>', 'JSONL file to write the rows to')
    .option('--repos <dir>', 'folder of git mirrors (owner__name or owner/name) for specs with a git base')
    .option('--report <file>', 'also write the per-instance build report (statuses of both runs) as JSON')
    .option('--json', 'print the build report as JSON instead of a table')
    .action(
      async (
        specs: string[],
        options: { output: string; repos?: string; report?: string; json?: boolean },
      ) => {
        const { runBuildCommand } = await import('../../datasets/commands.ts');
        process.exitCode = await runBuildCommand(specs, options);
      },
    );

  dataset
    .command('validate')
    .description(
      'Check every row: schema, both patches apply, test_patch touches tests only, gold resolves and the empty patch does not; estimate prompt tokens.',
    )
    .argument(
      '<path>',
      'SWE-bench / DockerLess rows (JSON list, JSON object or JSONL), or a folder of such files (as berth run -p)',
    )
    .option('--repos <dir>', 'folder of git mirrors for rows without dockerless.files')
    .option('--no-run', 'static checks only (schema, patches apply, tokens); do not run the tests')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options: { repos?: string; run: boolean; json?: boolean }) => {
      const { runValidateCommand } = await import('../../datasets/commands.ts');
      process.exitCode = await runValidateCommand(file, options);
    });

  dataset
    .command('controls')
    .description(
      'Write the negative controls empty.jsonl, cross.jsonl and partial.jsonl (SWE-bench predictions files).',
    )
    .argument('<path>', 'SWE-bench / DockerLess rows: a file, or a folder of row files')
    .requiredOption('-o, --output <dir>', 'folder to write the three predictions files to')
    .action(async (file: string, options: { output: string }) => {
      const { runControlsCommand } = await import('../../datasets/commands.ts');
      process.exitCode = await runControlsCommand(file, options);
    });
};
