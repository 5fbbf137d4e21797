import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/**
 * berth's caches under the cache root (`$BERTH_CACHE_DIR`, default `~/.cache/berth`) that `--cache`
 * removes: installed agents, model responses, the JVM helper, the install cache (snapshots
 * materialised and installed once, with their warm Go build caches), registry tasks fetched with git.
 */
const CACHE_FOLDERS = ['agents', 'models', 'jvm-helper', 'installs', 'registry'] as const;

/** Bytes under `path` (as `du -sb`: apparent sizes, links not followed); 0 when absent. */
async function folderBytes(path: string): Promise<number> {
  const { existsSync } = await import('node:fs');
  if (!existsSync(path)) return 0;
  const { execa } = await import('execa');
  const du = await execa('du', ['-sb', '--', path], { reject: false });
  return Number(du.stdout.split('\t')[0]) || 0;
}

/**
 * `--job NAME` names a job berth knows: its folder under `jobsDir`, a temp folder recorded for
 * it, or a container or network labelled with it.
 * @throws UsageError (exit 2) naming the job when none of those exist.
 */
async function checkJobKnown(
  job: string,
  jobsDir: string,
  recorded: (job: string) => boolean,
): Promise<void> {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  if (job.trim() === '' || job.includes('/') || job === '.' || job === '..')
    await usage(`--job expects a job's name (no slash), got ${JSON.stringify(job)}`);
  if (existsSync(join(jobsDir, job)) || recorded(job)) return;
  const { connectDocker, dockerAvailable } = await import('../../environments/docker/client.ts');
  if (await dockerAvailable()) {
    const { dockerHasJob } = await import('../../environments/docker/clean.ts');
    if (await dockerHasJob((await connectDocker()).docker, job)) return;
  }
  await usage(
    `no such job: ${JSON.stringify(job)} (no folder ${join(jobsDir, job)}, and no container, network or temp folder berth made for it); --job takes the job's name (berth run --job-name), --jobs-dir where its folder is`,
  );
}

async function usage(message: string): Promise<never> {
  const { UsageError } = await import('../../errors.ts');
  throw new UsageError(message);
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

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
    .option(
      '--job <name>',
      "only what this job left; the job's name (berth run's --job-name, the folder's name under --jobs-dir)",
    )
    .option('--jobs-dir <dir>', 'where --job looks for the job folder', 'jobs')
    .option('--images', "also remove berth's cached task images (berth-cache/*)")
    .option(
      '--cache',
      "also remove berth's caches: installed agents (folders and berth-agent/* image layers), model responses, the JVM helper, installs, registry tasks fetched with git, the start-up build",
    )
    .action(async (opts: { job?: string; jobsDir: string; images?: boolean; cache?: boolean }) => {
      const { leftoversRecordJob, reclaimLeftovers } = await import('../../util/leftovers.ts');
      if (opts.job !== undefined) await checkJobKnown(opts.job, opts.jobsDir, leftoversRecordJob);
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
      const { rm } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const { cacheRoot } = await import('../../util/cache.ts');
      const { packagePath } = await import('../../util/package-root.ts');
      const root = cacheRoot();
      // The compiled sources bin/berth.js runs (rebuilt on the next start when removed).
      const build = process.env.BERTH_BUILD_DIR || packagePath('node_modules', '.cache', 'berth-build');
      const sizes: [string, number][] = [];
      for (const name of CACHE_FOLDERS) sizes.push([name, await folderBytes(join(root, name))]);
      sizes.push(['start-up build', await folderBytes(build)]);
      const total = sizes.reduce((sum, [, bytes]) => sum + bytes, 0);
      const list = sizes.map(([name, bytes]) => `${name} ${mib(bytes)}`).join(', ');
      if (opts.cache) {
        for (const name of CACHE_FOLDERS) await rm(join(root, name), { recursive: true, force: true });
        // Last: every module this command needs is loaded by now.
        await rm(build, { recursive: true, force: true });
        process.stdout.write(`removed berth's caches under ${root} and ${build}: ${mib(total)} (${list})\n`);
      } else {
        process.stdout.write(
          `berth's caches: ${mib(total)} (${list}) under ${root} and ${build}; \`berth clean --cache\` removes them\n`,
        );
      }
    });
};
