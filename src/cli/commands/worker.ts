/**
 * `berth worker --queue redis://...`: runs trials that `berth run --queue` puts on the queue,
 * on this machine (docs/scale-out.md). Runs until Ctrl-C / SIGTERM: then it takes no new
 * trial, lets the running ones finish and exits (a second Ctrl-C exits at once; its trials
 * then go to other workers once their locks expire).
 */
import { Option } from 'commander';
import { oneOf } from '../choices.ts';
import type { RegisterCommand } from './index.ts';

interface WorkerCommandOptions {
  queue: string;
  queueCa?: string;
  concurrency: string;
  env?: 'local' | 'docker';
  root?: string;
  maxBlobMb?: string;
  lockSec: string;
  envFile?: string;
  modelBaseUrl?: string;
}

export const registerWorker: RegisterCommand = (program) => {
  program
    .command('worker')
    .description('Run trials from a queue (berth run --queue) on this machine (docs/scale-out.md)')
    .requiredOption(
      '--queue <url>',
      'the Redis of the queue: redis://[user:password@]host:port or rediss://...',
    )
    .option(
      '--queue-ca <file>',
      'CA certificate (PEM) of a rediss:// queue whose certificate Node does not trust',
    )
    .option('-n, --concurrency <n>', 'trials run at once', '1')
    .addOption(
      oneOf(
        new Option('--env <kind>', 'take only trials of this environment kind (default: local and docker)'),
        ['local', 'docker'],
      ),
    )
    .option('--root <dir>', "the worker's own folder: blob cache, trial folders (default <cache>/worker)")
    .option(
      '--max-blob-mb <mb>',
      'largest blob (a trial folder packed) sent back, in MiB (default 64, at most 512)',
    )
    .option(
      '--model-base-url <url>',
      "OpenAI-compatible server of the trials' models (the job's --model-base-url): keys go only where the worker says",
    )
    .option(
      '--env-file <file>',
      "model keys for trials that call models (dotenv; default this process's environment)",
    )
    .option(
      '--lock-sec <sec>',
      'seconds without a sign of life after which its trials go to other workers',
      '30',
    )
    .action(async (options: WorkerCommandOptions) => {
      const { join } = await import('node:path');
      const { UsageError } = await import('../../errors.ts');
      const { cacheRoot } = await import('../../util/cache.ts');
      const { maxBlobBytes } = await import('../../queue/blobs.ts');
      const { startWorker } = await import('../../queue/worker.ts');
      const concurrency = Number(options.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new UsageError(
          `-n/--concurrency expects a positive whole number, got ${JSON.stringify(options.concurrency)}`,
        );
      const lockSec = Number(options.lockSec);
      if (!(lockSec >= 1))
        throw new UsageError(`--lock-sec expects at least 1, got ${JSON.stringify(options.lockSec)}`);
      const log = (line: string) => process.stderr.write(`berth worker: ${line}\n`);
      const worker = await startWorker({
        address: { url: options.queue, ...(options.queueCa ? { caFile: options.queueCa } : {}) },
        root: options.root ?? join(cacheRoot(), 'worker'),
        concurrency,
        envs: options.env ? [options.env] : ['local', 'docker'],
        maxBlobBytes: maxBlobBytes(options.maxBlobMb),
        lockSec,
        ...(options.envFile ? { envFile: options.envFile } : {}),
        ...(options.modelBaseUrl ? { modelBaseUrl: options.modelBaseUrl } : {}),
        log,
      });
      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (name: string) => {
          if (stopping) process.exit(130);
          stopping = true;
          log(`${name}: no new trial is taken; running ones finish (again to quit at once)`);
          void worker.close().then(resolve);
        };
        process.on('SIGINT', () => stop('Ctrl-C'));
        process.on('SIGTERM', () => stop('SIGTERM'));
      });
    });
};
