import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/** berth's caches under the cache root (`$BERTH_CACHE_DIR`, default `~/.cache/berth`) that `--cache` removes. */
const CACHE_FOLDERS = ['agents', 'models', 'jvm-helper'] as const;

/**
 * `berth clean`: removes what berth processes that are no longer running left behind (after a
 * crash or `kill -9`): containers and networks (egress proxies included), temp folders and
 * their tmpfs mounts; never what a running berth process owns (src/util/owner.ts). Optionally
 * its cached task images (`--images`) and its caches (`--cache`: installed agents' prepared
 * folders and image layers, the model response cache, the JVM helper).
 */
export const registerClean: RegisterCommand = (program: Command) => {
  program
    .command('clean')
    .description(
      'Remove what berth runs that are no longer running left (containers, networks, temp folders; all jobs, or one with --job), and optionally its cached images and caches',
    )
    .option('--job <id>', 'only what this job left')
    .option('--images', "also remove berth's cached task images (berth-cache/*)")
    .option(
      '--cache',
      "also remove berth's caches: installed agents (folders and berth-agent/* image layers), model responses, the JVM helper",
    )
    .action(async (opts: { job?: string; images?: boolean; cache?: boolean }) => {
      const { reclaimLeftovers } = await import('../../util/leftovers.ts');
      const folders = await reclaimLeftovers(opts.job ? { job: opts.job } : {});
      process.stdout.write(
        `removed ${folders.folders.length} temp folder(s) of berth runs no longer running\n`,
      );
      const { connectDocker, dockerAvailable } = await import('../../environments/docker/client.ts');
      const { cleanDocker, removeAgentLayers } = await import('../../environments/docker/clean.ts');
      if (await dockerAvailable()) {
        const { docker } = await connectDocker();
        const removed = await cleanDocker(docker, opts);
        const layers = opts.cache ? await removeAgentLayers(docker) : 0;
        process.stdout.write(
          `removed ${removed.containers} container(s), ${removed.networks} network(s), ${removed.images + layers} image(s)\n`,
        );
      }
      if (opts.cache) {
        const { rm } = await import('node:fs/promises');
        const { join } = await import('node:path');
        const { cacheRoot } = await import('../../util/cache.ts');
        const root = cacheRoot();
        for (const name of CACHE_FOLDERS) await rm(join(root, name), { recursive: true, force: true });
        process.stdout.write(`removed berth's caches under ${root} (${CACHE_FOLDERS.join(', ')})\n`);
      }
    });
};
