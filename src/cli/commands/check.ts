import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { BerthError, InputError } from '../../errors.ts';
import type { TaskCheck } from '../../tasks/harbor/check.ts';
import type { Task } from '../../tasks/task.ts';
import type { RegisterCommand } from './index.ts';

/**
 * The task folders of a path: the folder itself when it holds task.toml, else its
 * children (sorted, hidden skipped) that hold task.toml.
 * @throws InputError when the path is not a folder or holds no task.toml.
 */
export function harborTaskDirs(path: string): string[] {
  const dir = resolve(path);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new InputError({ file: path }, 'not a folder');
  if (existsSync(join(dir, 'task.toml'))) return [dir];
  // The multilingual demo's layout: <dataset>/sample_task.json + sample_tasks/<id>/.
  if (existsSync(join(dir, 'sample_task.json')) && existsSync(join(dir, 'sample_tasks')))
    return harborTaskDirs(join(dir, 'sample_tasks'));
  const dirs = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => join(dir, e.name))
    .filter((d) => existsSync(join(d, 'task.toml')))
    .sort();
  if (dirs.length === 0)
    throw new InputError(
      { file: path },
      'no Harbor task here (a task folder holds task.toml and environment/)',
    );
  return dirs;
}

/** A check for a task that does not load: it cannot run here, for the loader's reason. */
export function unloadableCheck(dir: string, error: unknown): TaskCheck {
  return {
    task: basename(dir),
    image: '-',
    needs: [],
    network: [],
    phases: { agent: '-', verifier: '-' },
    canRun: 'no',
    reasons: [`the task does not load: ${(error as Error).message}`],
    features: [],
  };
}

/** `berth check -p <task or dataset>`: what each Harbor task needs and whether it can run here. */
export const registerCheck: RegisterCommand = (program: Command) => {
  program
    .command('check')
    .description(
      'Report what each Harbor task needs (images, bases, network) and whether it can run here, without running it (exit 2 when a task does not load; the others are still reported)',
    )
    .requiredOption('-p, --path <dir>', 'a Harbor task folder or a dataset folder of tasks')
    .option(
      '--image-map <FROM=TO>',
      'use a local image instead of FROM (repeatable; FROM may be *)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--config <file>', 'config file with [docker.image_map]')
    .option(
      '--images-dir <dir>',
      "folder of the tasks' image archives (tar_path); default sample_images/ beside the tasks",
    )
    .option('--json', 'one JSON document on stdout')
    .action(
      async (opts: {
        path: string;
        imageMap: string[];
        config?: string;
        imagesDir?: string;
        json?: boolean;
      }) => {
        const { loadHarborTask } = await import('../../tasks/harbor/loader.ts');
        const { checkTask, formatCheck } = await import('../../tasks/harbor/check.ts');
        const { dockerOptionsFrom } = await import('../../environments/docker/options.ts');
        const { connectDocker } = await import('../../environments/docker/client.ts');
        const { imageMap } = dockerOptionsFrom(opts.imageMap, opts.config);
        // Each task is loaded on its own: a task that does not load is reported, not fatal.
        const loaded: Array<{ dir: string; task?: Task; error?: unknown }> = harborTaskDirs(opts.path).map(
          (dir) => {
            try {
              return { dir, task: loadHarborTask(dir) };
            } catch (error) {
              if (!BerthError.isInstance(error)) throw error;
              return { dir, error };
            }
          },
        );
        let exists: ((image: string) => Promise<boolean>) | undefined;
        let engine: import('../../environments/docker/accelerators.ts').EngineAccelerators | undefined;
        let storageEnforced: boolean | undefined;
        try {
          const { docker } = await connectDocker();
          const { engineAccelerators } = await import('../../environments/docker/accelerators.ts');
          engine = await engineAccelerators(docker);
          const { storageOptWorth } = await import('../../environments/docker/limits.ts');
          storageEnforced = storageOptWorth(docker, await docker.info());
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
        const checks: TaskCheck[] = [];
        for (const { dir, task, error } of loaded)
          checks.push(
            task
              ? await checkTask(task, imageMap, exists, engine, {
                  ...(opts.imagesDir ? { imagesDir: resolve(opts.imagesDir) } : {}),
                  ...(storageEnforced !== undefined ? { storageEnforced } : {}),
                })
              : unloadableCheck(dir, error),
          );
        const summary = {
          total: checks.length,
          yes: checks.filter((c) => c.canRun === 'yes').length,
          needs_network: checks.filter((c) => c.canRun === 'needs-network').length,
          no: checks.filter((c) => c.canRun === 'no').length,
        };
        // A task that does not load is bad input: exit 2 once every task is reported. A task that
        // loads but cannot run here (no Docker engine, a missing image, ...) exits 1, each named
        // on stderr by its task.toml with the reasons.
        const unloadable = loaded.filter((l) => l.error !== undefined);
        const cannotRun = loaded.filter((l, i) => l.task !== undefined && checks[i]?.canRun === 'no');
        if (unloadable.length > 0) process.exitCode = 2;
        else if (cannotRun.length > 0) process.exitCode = 1;
        if (opts.json) process.stdout.write(`${JSON.stringify({ summary, tasks: checks }, null, 2)}\n`);
        else {
          for (const c of checks) process.stdout.write(`${formatCheck(c)}\n\n`);
          process.stdout.write(
            `${summary.total} task(s): ${summary.yes} can run here offline, ${summary.needs_network} need the network, ${summary.no} cannot run here${unloadable.length ? ` (${unloadable.length} do not load)` : ''}\n`,
          );
        }
        for (const { dir } of cannotRun) {
          const reasons = checks[loaded.findIndex((l) => l.dir === dir)]?.reasons ?? [];
          process.stderr.write(`berth: ${join(dir, 'task.toml')}: cannot run here: ${reasons.join('; ')}\n`);
        }
      },
    );
};
