import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/**
 * `berth bases build -p <dataset> [BASE...] [--force-build]`: builds the base images of a
 * dataset's `bases/manifest` in dependency order, as the Kotlin Benchmark's
 * `scripts/build_bases.sh` does (existing ones skipped; `--force-build`, Harbor's name, or
 * `--rebuild` rebuilds; BASE names one base: `repo`, `repo:tag` or its image).
 */
export const registerBases: RegisterCommand = (program: Command) => {
  const bases = program
    .command('bases')
    .description("A dataset's shared base images (bases/manifest, the Kotlin Benchmark layout)");
  bases
    .command('build')
    .description(
      'Build the base images listed in bases/manifest, in dependency order (existing ones skipped unless --force-build)',
    )
    .argument(
      '[bases...]',
      'only these bases (repo, repo:tag or image name), with the bases they need when missing',
    )
    .requiredOption(
      '-p, --path <dir>',
      'the dataset folder (holding bases/) or its bases/ folder or a task in it',
    )
    .option('--force-build', 'rebuild the chosen bases even when they exist, without the layer cache')
    .option('--rebuild', 'same as --force-build')
    .option(
      '--image-map <FROM=TO>',
      'use a local image instead of FROM (repeatable; FROM may be *)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--config <file>', 'config file with [docker.image_map]')
    .option('--build-timeout <sec>', 'timeout of each build in seconds', Number)
    .action(
      async (
        names: string[],
        opts: {
          path: string;
          forceBuild?: boolean;
          rebuild?: boolean;
          imageMap: string[];
          config?: string;
          buildTimeout?: number;
        },
      ) => {
        const { existsSync } = await import('node:fs');
        const { join, resolve } = await import('node:path');
        const { InputError } = await import('../../errors.ts');
        const { findBasesDir } = await import('../../tasks/harbor/loader.ts');
        const { dockerOptionsFrom } = await import('../../environments/docker/options.ts');
        const { connectDocker } = await import('../../environments/docker/client.ts');
        const { ImageService } = await import('../../environments/docker/images.ts');
        const dir = resolve(opts.path);
        const basesDir = existsSync(join(dir, 'manifest'))
          ? dir
          : (findBasesDir(join(dir, 'x')) ?? findBasesDir(dir));
        if (!basesDir)
          throw new InputError({ file: opts.path }, 'no bases/manifest here or in the parent folders');
        const { imageMap } = dockerOptionsFrom(opts.imageMap, opts.config);
        const { docker } = await connectDocker();
        const images = new ImageService(docker, { imageMap, jobId: 'bases' });
        const started = Date.now();
        const done = await images.buildAllBases(basesDir, {
          ...(names.length ? { only: names } : {}),
          force: Boolean(opts.forceBuild || opts.rebuild),
          timeoutSec: opts.buildTimeout,
          onLog: (line) => {
            if (process.env.BERTH_VERBOSE || /^(built|base image)/.test(line))
              process.stderr.write(`${line}\n`);
          },
        });
        for (const d of done) process.stdout.write(`${d.built ? 'built  ' : 'present'} ${d.image}\n`);
        process.stdout.write(
          `done: built ${done.filter((d) => d.built).length}, skipped ${done.filter((d) => !d.built).length} in ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
        );
      },
    );
};
