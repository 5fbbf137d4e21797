/**
 * `berth trial SPEC.json`: runs one trial from its spec (src/trials/spec.ts), as a worker on
 * another machine does and for debugging a single trial. Hidden from the main help.
 * Exit codes: 0 the trial ran (whatever its verdict), 2 a bad spec, 1 a berth bug.
 */
import { Option } from 'commander';
import type { RegisterCommand } from './index.ts';

export const registerTrial: RegisterCommand = (program) => {
  program
    .command('trial <spec>', { hidden: true })
    .description('Run one trial from a trial spec (JSON; see src/trials/spec.ts)')
    .option('--jobs-dir <dir>', 'folder of job folders; the trial goes to <jobs-dir>/<job>/<trial>', 'jobs')
    .option('--trial-dir <dir>', 'write the trial here instead')
    .addOption(
      new Option('--events', 'write every event to stdout as JSON Lines (the result path goes to stderr)'),
    )
    .action(async (specFile: string, options: { jobsDir: string; trialDir?: string; events?: boolean }) => {
      const { readFile } = await import('node:fs/promises');
      const { join, resolve } = await import('node:path');
      const { parseTrialSpec } = await import('../../trials/spec.ts');
      const { runTrial } = await import('../../trials/engine.ts');
      // A file-system error naming the path is shown as bad input (exit 2) by the CLI.
      const text = await readFile(specFile, 'utf8');
      const spec = parseTrialSpec(text, specFile);
      const trialDir = resolve(options.trialDir ?? join(options.jobsDir, spec.job.name, spec.trial.name));
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        const result = await runTrial(
          spec,
          options.events ? (event) => process.stdout.write(`${JSON.stringify(event)}\n`) : () => {},
          { trialDir, signal: controller.signal },
        );
        const line = `${result.trial_name}: ${result.berth.status}${result.berth.note ? ` (${result.berth.note})` : ''}\nresult: ${join(trialDir, 'result.json')}\n`;
        (options.events ? process.stderr : process.stdout).write(line);
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
};
