/**
 * The `berth` command. Each subcommand lives in `commands/<name>.ts` and is
 * listed in `commands/index.ts`; its action is imported lazily so start-up
 * stays fast. Exit codes: 0 done (whatever the verdicts), 1 internal error,
 * 2 bad usage or bad input, 130 after Ctrl-C (SIGINT), 143 after SIGTERM.
 */
import { Command, CommanderError } from 'commander';
import { BerthError } from '../errors.ts';
import { pathErrorMessage } from '../util/input-files.ts';
import { VERSION } from '../version.ts';
import { commands } from './commands/index.ts';

export async function main(argv: string[]): Promise<number> {
  const program = new Command('berth')
    .description('Evaluate AI coding agents and code models on software-engineering benchmarks.')
    .version(VERSION, '-V, --version')
    // A bad flag gets one line (with commander's "did you mean") and this hint, not the whole help.
    .showHelpAfterError("(add --help for the command's options)")
    .exitOverride();
  for (const register of commands) register(program);
  // No command at all: the help, as a usage error (exit 2), as Harbor's CLI does.
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    return handleError(error);
  }
}

function handleError(error: unknown): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
    if (error.code === 'commander.help') return 0;
    // commander already printed the message; usage errors exit 2, as documented.
    return 2;
  }
  if (BerthError.isInstance(error)) {
    process.stderr.write(`berth: ${error.message}\n`);
    return error.exitCode;
  }
  const path = pathErrorMessage(error);
  if (path) {
    process.stderr.write(`berth: ${path}\n`);
    return 2;
  }
  process.stderr.write(
    `berth: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.stderr.write('This is a bug in berth; please report it with the command you ran.\n');
  return 1;
}

// `berth ... | head` closes stdout early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
