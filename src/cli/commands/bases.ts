import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/** `berth bases build -p <dataset>`: builds every base image of a dataset's `bases/manifest`, in dependency order. */
export const registerBases: RegisterCommand = (program: Command) => {
  const bases = program
    .command('bases')
    .description("A dataset's shared base images (bases/manifest, the Kotlin Benchmark layout)");
  bases
    .command('build')
    .description('Build every base image listed in bases/manifest (skips existing ones unless --rebuild)')
    .requiredOption(
      '-p, --path <dir>',
      'the dataset folder (holding bases/) or its bases/ folder or a task in it',
    )
    .option('--rebuild', 'rebuild images that exist already')
    .option(
      '--image-map <FROM=TO>',
      'use a local image instead of FROM (repeatable; FROM may be *)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--config <file>', 'config file with [docker.image_map]')
    .option('--build-timeout <sec>', 'timeout of each build in seconds', Number)
    .action(
      async (opts: {
        path: string;
        rebuild?: boolean;
        imageMap: string[];
        config?: string;
        buildTimeout?: number;
      }) => {
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
        const images = new ImageService(docker, { imageMap, rebuild: opts.rebuild, jobId: 'bases' });
        const started = Date.now();
        const done = await images.buildAllBases(basesDir, {
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
