import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/** `berth clean`: removes containers and networks berth left behind (after a crash), optionally its cached images. */
export const registerClean: RegisterCommand = (program: Command) => {
  program
    .command('clean')
    .description(
      'Remove Docker containers and networks berth started (all jobs, or one with --job), and optionally its cached images',
    )
    .option('--job <id>', 'only what this job started')
    .option('--images', "also remove berth's cached task images (berth-cache/*)")
    .action(async (opts: { job?: string; images?: boolean }) => {
      const { connectDocker } = await import('../../environments/docker/client.ts');
      const { cleanDocker } = await import('../../environments/docker/clean.ts');
      const { docker } = await connectDocker();
      const removed = await cleanDocker(docker, opts);
      process.stdout.write(
        `removed ${removed.containers} container(s), ${removed.networks} network(s), ${removed.images} image(s)\n`,
      );
    });
};
