/**
 * Harbor's registries, offline (harbor-format.md §6): `berth run -d NAME@VERSION
 * --registry-path registry.json` reads Harbor's legacy registry file (a JSON list of
 * `{name, version, description, tasks: [{name, git_url?, git_commit_id?, path}], metrics}`),
 * fetches each task's folder with git at its pinned commit from a local clone or a mirror
 * under `--repos` (never the network), and runs the dataset as a folder of Harbor tasks.
 *
 * - A task without `git_url` is a folder relative to the registry file.
 * - `git_url` that is a local path or `file://` URL is read as it is; any other URL is looked
 *   up as `owner/name` (its last two path parts) under `--repos` (`owner__name` or
 *   `owner/name`, bare or not, as for SWE-bench rows); without a mirror the run stops (exit 2)
 *   naming the URL.
 * - Fetched folders are kept in `<cache>/registry/` (`berth clean --cache` removes it): one
 *   folder per repository and commit, then the dataset's folder of task copies.
 * - What needs the network is refused with the reason and the offline way: `--registry-url`
 *   over http(s) (Harbor's default registry is one), `-d ORG/NAME` and `-t ORG/NAME[@REF]`
 *   (Harbor's package registry, Harbor Hub).
 */
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { InputError, UsageError } from '../../errors.ts';
import { cacheRoot } from '../../util/cache.ts';
import { findMirror } from '../swebench/runnable.ts';
import { fieldPath } from './config.ts';

/** Harbor's default registry (`DEFAULT_REGISTRY_URL`), which berth does not download. */
export const HARBOR_REGISTRY_URL =
  'https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json';

const registryTask = z.object({
  name: z.string().min(1),
  git_url: z.string().min(1).nullish(),
  git_commit_id: z.string().min(1).nullish(),
  path: z.string().min(1),
});
const registryDataset = z.looseObject({
  name: z.string().min(1),
  version: z.string().min(1),
  description: z.string().nullish(),
  tasks: z.array(registryTask),
});

export type RegistryTask = z.infer<typeof registryTask>;
export type RegistryDataset = z.infer<typeof registryDataset>;

/** What `-d/-t` and the registry flags say (`berth run`). */
export interface RegistryFlags {
  dataset?: string;
  task?: string;
  registryPath?: string;
  registryUrl?: string;
  /** Folder of git mirrors (`--repos`). */
  repos?: string;
}

/**
 * Reads a legacy registry file.
 * @throws InputError naming the file and the entry's field when it is not one
 */
export function readRegistry(file: string): RegistryDataset[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new InputError({ file }, 'file not found');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new InputError({ file }, `not JSON: ${(error as Error).message}`);
  }
  const parsed = z.array(registryDataset).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(
      { file, field: fieldPath(issue?.path ?? []) },
      `not Harbor's registry format: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * The dataset `ref` names (`NAME@VERSION`, or `NAME` when the registry has one version of it).
 * @throws UsageError when the registry has no such dataset or several versions and none is named
 */
export function findDataset(registry: RegistryDataset[], ref: string, file: string): RegistryDataset {
  const at = ref.lastIndexOf('@');
  const name = at > 0 ? ref.slice(0, at) : ref;
  const version = at > 0 ? ref.slice(at + 1) : undefined;
  const named = registry.filter((d) => d.name === name);
  if (named.length === 0) {
    const names = [...new Set(registry.map((d) => d.name))].sort();
    throw new UsageError(
      `-d ${ref}: ${file} has no dataset ${name} (it has ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', ...' : ''})`,
    );
  }
  const versions = named.map((d) => d.version);
  if (version === undefined) {
    if (named.length === 1) return named[0] as RegistryDataset;
    throw new UsageError(
      `-d ${ref}: ${name} has versions ${versions.join(', ')}; say which: -d ${name}@VERSION`,
    );
  }
  const found = named.find((d) => d.version === version);
  if (!found)
    throw new UsageError(`-d ${ref}: ${name} has no version ${version} (it has ${versions.join(', ')})`);
  return found;
}

/** `owner/name` of a git URL (its last two path parts, `.git` dropped), or undefined. */
export function repoOfUrl(url: string): string | undefined {
  const path = url.replace(/^[a-z+]+:\/\/[^/]+\//i, '').replace(/^[^@]+@[^:]+:/, '');
  const parts = path
    .replace(/\.git\/?$/, '')
    .split('/')
    .filter(Boolean);
  return parts.length >= 2 ? parts.slice(-2).join('/') : undefined;
}

/** The local git repository a task's `git_url` is read from. @throws InputError when only the network has it */
function localRepository(task: RegistryTask, file: string, index: number, repos: string | undefined): string {
  const url = task.git_url as string;
  if (url.startsWith('file://')) return fileURLToPath(url);
  if (isAbsolute(url)) return url;
  if (!/^[a-z+]+:\/\/|^[^/]+@[^:]+:/i.test(url)) return resolve(dirname(file), url);
  const repo = repoOfUrl(url);
  const mirror = repos && repo ? findMirror(repos, repo) : undefined;
  if (mirror) return mirror;
  throw new InputError(
    { file, field: `tasks[${index}].git_url` },
    `${task.name}: ${url} is on the network and berth fetches offline: ${
      repos ? `no mirror of ${repo ?? url} under ${repos}` : 'pass --repos DIR'
    } (a git clone --mirror named ${repo ? `${repo.replace('/', '__')} or ${repo}` : 'owner__name'})`,
  );
}

/**
 * Fetches `dataset`'s tasks into the cache and returns the folder holding one folder per task.
 * @throws InputError naming the registry file and the task when a folder cannot be fetched
 */
export async function fetchDataset(
  dataset: RegistryDataset,
  file: string,
  options: { repos?: string; cacheDir?: string; onLog?: (line: string) => void } = {},
): Promise<string> {
  const root = join(options.cacheDir ?? cacheRoot(), 'registry');
  const key = createHash('sha256').update(JSON.stringify(dataset.tasks)).update(resolve(file)).digest('hex');
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');
  const target = join(root, 'datasets', `${safe(dataset.name)}@${safe(dataset.version)}-${key.slice(0, 12)}`);
  // Every task pinned to a commit: the folder made before is the same; else it is made again.
  const pinned = dataset.tasks.every((t) => t.git_url && t.git_commit_id);
  if (pinned && existsSync(join(target, '.berth-registry.json'))) return target;
  const staging = `${target}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const seen = new Set<string>();
  try {
    for (const [index, task] of dataset.tasks.entries()) {
      const folder = safe(basename(task.name));
      if (seen.has(folder))
        throw new InputError(
          { file, field: `tasks[${index}].name` },
          `two tasks named ${folder} in ${dataset.name}`,
        );
      seen.add(folder);
      if (!task.git_url) {
        const source = resolve(dirname(file), task.path);
        if (!statSync(source, { throwIfNoEntry: false })?.isDirectory())
          throw new InputError({ file, field: `tasks[${index}].path` }, `${task.name}: no folder ${source}`);
        cpSync(source, join(staging, folder), { recursive: true, verbatimSymlinks: true });
        continue;
      }
      const repo = localRepository(task, file, index, options.repos);
      const commit = task.git_commit_id ?? 'HEAD';
      const sha = await execa('git', ['-C', repo, 'rev-parse', '--verify', `${commit}^{commit}`], {
        reject: false,
      });
      if (sha.exitCode !== 0)
        throw new InputError(
          { file, field: `tasks[${index}].git_commit_id` },
          `${task.name}: ${repo} has no commit ${commit}${options.repos ? ' (update the mirror: git fetch)' : ''}`,
        );
      const checkout = join(
        root,
        'repos',
        safe(repoOfUrl(task.git_url) ?? basename(repo)),
        sha.stdout.trim(),
      );
      const path = task.path.replace(/^\.?\/+/, '').replace(/\/+$/, '');
      if (path.split('/').includes('..') || isAbsolute(task.path))
        throw new InputError(
          { file, field: `tasks[${index}].path` },
          `${task.name}: a path inside the repository was expected`,
        );
      if (!existsSync(join(checkout, path))) {
        options.onLog?.(`fetching ${task.name} (${path} at ${sha.stdout.trim().slice(0, 12)}) from ${repo}`);
        mkdirSync(checkout, { recursive: true });
        // git archive writes only paths inside `path`; tar keeps links as links (the task loader refuses escaping ones).
        try {
          await execa('git', ['-C', repo, 'archive', '--format=tar', sha.stdout.trim(), '--', path]).pipe(
            'tar',
            ['-x', '--no-same-owner', '-C', checkout],
          );
        } catch {
          rmSync(join(checkout, path), { recursive: true, force: true });
          throw new InputError(
            { file, field: `tasks[${index}].path` },
            `${task.name}: ${path} is not in ${repo} at ${commit}`,
          );
        }
      }
      // A link in the repository (the folder, or a folder on its way) could point at a host folder.

      let real: string | undefined;
      try {
        real = realpathSync(join(checkout, path));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // absent: said below
      }
      if (real && real !== join(realpathSync(checkout), path))
        throw new InputError(
          { file, field: `tasks[${index}].path` },
          `${task.name}: ${path} is a symbolic link in the repository (or lies under one); a folder was expected`,
        );
      if (!statSync(join(checkout, path), { throwIfNoEntry: false })?.isDirectory())
        throw new InputError(
          { file, field: `tasks[${index}].path` },
          `${task.name}: ${path} is not a folder at ${commit}`,
        );
      cpSync(join(checkout, path), join(staging, folder), { recursive: true, verbatimSymlinks: true });
    }
    writeFileSync(
      join(staging, '.berth-registry.json'),
      `${JSON.stringify({ registry: resolve(file), name: dataset.name, version: dataset.version }, null, 2)}\n`,
    );
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

/**
 * The folder `berth run` runs for `-d/-t` and the registry flags, or undefined when none is given.
 * @throws UsageError for what needs the network or is given twice
 */
export async function registryDatasetPath(
  flags: RegistryFlags,
  onLog?: (line: string) => void,
): Promise<string | undefined> {
  if (flags.task)
    throw new UsageError(
      `-t ${flags.task}: Harbor's package registry (Harbor Hub) is on the network and berth runs offline; download the task and run its folder with -p DIR`,
    );
  if (!flags.dataset) {
    if (flags.registryPath || flags.registryUrl)
      throw new UsageError('--registry-path/--registry-url need -d NAME@VERSION');
    return undefined;
  }
  if (flags.dataset.includes('/'))
    throw new UsageError(
      `-d ${flags.dataset}: a name with a slash is a package of Harbor's package registry (Harbor Hub), which is on the network; berth runs offline: pass a legacy registry file with --registry-path FILE and -d NAME@VERSION, or run a folder with -p DIR`,
    );
  let file = flags.registryPath;
  if (flags.registryUrl) {
    if (file) throw new UsageError('--registry-path and --registry-url are alternatives');
    if (!flags.registryUrl.startsWith('file://'))
      throw new UsageError(
        `--registry-url ${flags.registryUrl}: berth does not download registries (offline); download the file and pass --registry-path FILE`,
      );
    file = fileURLToPath(flags.registryUrl);
  }
  if (!file)
    throw new UsageError(
      `-d ${flags.dataset}: Harbor's registry (${HARBOR_REGISTRY_URL}) is on the network and berth runs offline; download it and pass --registry-path FILE`,
    );
  const registry = readRegistry(file);
  const dataset = findDataset(registry, flags.dataset, file);
  return fetchDataset(dataset, file, {
    ...(flags.repos ? { repos: resolve(flags.repos) } : {}),
    ...(onLog ? { onLog } : {}),
  });
}
