/**
 * Ctrl-C and SIGTERM for a long command (`berth run`), installed once at the start of the
 * command's action so that a signal at any point (loading the dataset, checking rows,
 * starting environments, running trials) stops cleanly instead of killing the process.
 *
 * - The first SIGINT or SIGTERM aborts `signal`; the command stops what it is doing
 *   (pending trials are not started, running ones are cancelled, the job lock is released)
 *   and exits with {@link InterruptHandle.exitCode}: 130 for SIGINT, 143 for SIGTERM
 *   (the shell convention 128 + signal number: SIGINT is 2, SIGTERM is 15).
 * - A second signal exits at once with that code (no clean-up).
 */

export interface InterruptHandle {
  /** Aborted by the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** The exit code for the first signal received (130 SIGINT, 143 SIGTERM), undefined before one. */
  exitCode(): number | undefined;
  /** Removes the handlers (the process's default behaviour returns). */
  dispose(): void;
}

const CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Installs SIGINT/SIGTERM handlers for the life of a command.
 * @param write where the "stopping" message goes (stderr by default).
 */
export function installInterruptHandler(
  write: (text: string) => void = (text) => process.stderr.write(text),
): InterruptHandle {
  const controller = new AbortController();
  let first: number | undefined;
  const handler = (name: keyof typeof CODES) => {
    if (first === undefined) {
      first = CODES[name];
      write(
        `\nberth: ${name === 'SIGINT' ? 'Ctrl-C' : name}: stopping (finished trials are kept; Ctrl-C again to quit at once)\n`,
      );
      controller.abort(new Error(`interrupted by ${name}`));
    } else {
      process.exit(first);
    }
  };
  const onInt = () => handler('SIGINT');
  const onTerm = () => handler('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    exitCode: () => first,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

/**
 * Test-only hook: when `BERTH_TEST_PAUSE_MS` is set, waits that many milliseconds at the
 * start of `berth run` (after the signal handlers are installed, before the dataset is
 * loaded), printing `berth: test pause` on stderr first, so a test can signal the command
 * at an early point. The pause is not cut short by a signal (it stands for a slow step).
 * Not for users.
 */
export async function testPause(): Promise<void> {
  const ms = Number(process.env.BERTH_TEST_PAUSE_MS);
  if (!(ms > 0)) return;
  process.stderr.write('berth: test pause\n');
  await new Promise((resolve) => setTimeout(resolve, ms));
}
