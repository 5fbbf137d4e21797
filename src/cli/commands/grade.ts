/**
 * `berth grade --expected FILE --report FILE... [--rules swebench|multi-swe-bench|kotlin]`:
 * the verdict of one run, with the reason for every expected test that does not count as passed.
 */
import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

export const registerGrade: RegisterCommand = (program: Command) => {
  program
    .command('grade')
    .description(
      'Grade test reports against expected tests (SWE-bench, Multi-SWE-bench or Kotlin Benchmark rules).',
    )
    .requiredOption(
      '-e, --expected <file>',
      'SWE-bench row, Multi-SWE-bench row, or Kotlin Benchmark expected_tests.json',
    )
    .requiredOption(
      '-r, --report <files...>',
      'report files (kotlin: also folders holding build/test-results)',
    )
    .option(
      '--rules <name>',
      "swebench | multi-swe-bench | kotlin (guessed from the expectations file when absent; a SWE-bench row graded without --rules gets berth's stricter default rules, --rules swebench the harness's verdict)",
    )
    .option('-f, --format <name>', 'parser for the reports (swebench, multi-swe-bench); detected when absent')
    .option(
      '--prefix <mode>',
      'prefix matching of truncated expected ids: truncated | always | never',
      'truncated',
    )
    .option('--keep-parameterized', 'kotlin: grade parameterised cases too (the reference drops them)')
    .option('--instance <id>', 'the row to use when the expectations file holds several')
    .option('--json', 'print one JSON document (schema: docs/grade-output.schema.json)')
    .action(
      async (options: {
        expected: string;
        report: string[];
        rules?: string;
        format?: string;
        prefix: string;
        keepParameterized?: boolean;
        instance?: string;
        json?: boolean;
      }) => {
        const { UsageError } = await import('../../errors.ts');
        const { gradeFiles, renderGradeText } = await import('../grade-files.ts');
        if (!['truncated', 'always', 'never'].includes(options.prefix)) {
          throw new UsageError(`--prefix must be truncated, always or never, not "${options.prefix}"`);
        }
        const output = await gradeFiles({
          expected: options.expected,
          reports: options.report,
          rules: options.rules as 'swebench' | 'multi-swe-bench' | 'kotlin' | undefined,
          format: options.format,
          prefix: options.prefix as 'truncated' | 'always' | 'never',
          keepParameterized: options.keepParameterized,
          instanceId: options.instance,
        });
        process.stdout.write(options.json ? `${JSON.stringify(output, null, 2)}\n` : renderGradeText(output));
      },
    );
};
