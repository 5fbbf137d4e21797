/**
 * `berth parse [--format NAME] [--json] FILE...`: the status of every test in
 * one or more reports or console logs, with counts and warnings.
 */
import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

export const registerParse: RegisterCommand = (program: Command) => {
  program
    .command('parse')
    .description(
      'Parse test reports or console logs into a status per test (format detected unless --format).',
    )
    .argument('[files...]', 'report files (JUnit XML, pytest, go test, TAP, ...), plain or gzip-compressed')
    .option('-f, --format <name>', 'parser name or alias (see `berth parse --list`); detected when absent')
    .option('--list', 'list the parsers with their aliases')
    .option('--json', 'print one JSON document (schema: docs/parse-output.schema.json)')
    .option('--quiet', 'print only the counts, not every test')
    .option(
      '--merge',
      'the files are parts of one test run: merge tests with the same id (ERROR > FAILED > PASSED > SKIPPED) and count each id once; without it each file counts on its own and the total is their sum',
    )
    .action(
      async (
        files: string[],
        options: { format?: string; json?: boolean; quiet?: boolean; list?: boolean; merge?: boolean },
      ) => {
        if (options.list) {
          const { listParsers } = await import('../../parsers/registry.ts');
          for (const p of listParsers()) {
            const aliases = p.aliases?.length ? ` (${p.aliases.join(', ')})` : '';
            process.stdout.write(`${p.name}${aliases}\n    ${p.description}\n`);
          }
          return;
        }
        if (files.length === 0) {
          const { UsageError } = await import('../../errors.ts');
          throw new UsageError('berth parse: name at least one report file (or --list)');
        }
        const { parseFiles, renderParseText } = await import('../parse-files.ts');
        // Each file's error is reported and the others are still parsed; exit 2 at the end.
        // An unknown --format is bad usage for every file: it stops at once.
        const { BerthError, UsageError } = await import('../../errors.ts');
        const failed: string[] = [];
        const output = await parseFiles(files, {
          format: options.format,
          merge: Boolean(options.merge),
          onFileError: (file, error) => {
            if (error instanceof UsageError && /unknown report format/.test(error.message)) throw error;
            if (!BerthError.isInstance(error)) throw error;
            failed.push(file);
            const message = error.message.includes(file) ? error.message : `${file}: ${error.message}`;
            process.stderr.write(`berth: ${message}\n`);
          },
        });
        if (output.files.length > 0)
          process.stdout.write(
            options.json
              ? `${JSON.stringify(output, null, 2)}\n`
              : renderParseText(output, { quiet: options.quiet }),
          );
        if (failed.length > 0) {
          process.stderr.write(`berth: ${failed.length} of ${files.length} file(s) could not be parsed\n`);
          process.exitCode = 2;
        }
      },
    );
};
