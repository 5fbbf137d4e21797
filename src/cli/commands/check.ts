import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/** `berth check -p <task or dataset>`: what each Harbor task needs and whether it can run here. */
export const registerCheck: RegisterCommand = (program: Command) => {
  program
    .command('check')
    .description(
      'Report what each Harbor task needs (images, bases, network) and whether it can run here, without running it',
    )
    .requiredOption('-p, --path <dir>', 'a Harbor task folder or a dataset folder of tasks')
    .option(
      '--image-map <FROM=TO>',
      'use a local image instead of FROM (repeatable; FROM may be *)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--config <file>', 'config file with [docker.image_map]')
    .option('--json', 'one JSON document on stdout')
    .action(async (opts: { path: string; imageMap: string[]; config?: string; json?: boolean }) => {
      const { loadHarborPath } = await import('../../tasks/harbor/loader.ts');
      const { checkTask, formatCheck } = await import('../../tasks/harbor/check.ts');
      const { dockerOptionsFrom } = await import('../../environments/docker/options.ts');
      const { connectDocker } = await import('../../environments/docker/client.ts');
      const { imageMap } = dockerOptionsFrom(opts.imageMap, opts.config);
      const tasks = loadHarborPath(opts.path);
      let exists: ((image: string) => Promise<boolean>) | undefined;
      try {
        const { docker } = await connectDocker();
        const cache = new Map<string, Promise<boolean>>();
        exists = (image) => {
          let p = cache.get(image);
          if (!p) {
            p = docker
              .getImage(image)
              .inspect()
              .then(() => true)
              .catch(() => false);
            cache.set(image, p);
          }
          return p;
        };
      } catch {
        exists = undefined;
      }
      const checks = [];
      for (const task of tasks) checks.push(await checkTask(task, imageMap, exists));
      const summary = {
        total: checks.length,
        yes: checks.filter((c) => c.canRun === 'yes').length,
        needs_network: checks.filter((c) => c.canRun === 'needs-network').length,
        no: checks.filter((c) => c.canRun === 'no').length,
      };
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ summary, tasks: checks }, null, 2)}\n`);
        return;
      }
      for (const c of checks) process.stdout.write(`${formatCheck(c)}\n\n`);
      process.stdout.write(
        `${summary.total} task(s): ${summary.yes} can run here offline, ${summary.needs_network} need the network, ${summary.no} cannot run here\n`,
      );
    });
};
