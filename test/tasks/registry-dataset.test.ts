/**
 * Fetching a registry dataset's tasks with git (src/tasks/harbor/registry-dataset.ts), without
 * Docker: a hostile repository whose task path is a link to a host folder is refused.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  fetchDataset,
  readRegistry,
  registryDatasetPath,
  repoOfUrl,
} from '../../src/tasks/harbor/registry-dataset.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-harbor2-registry-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function repoWith(files: (root: string) => void): Promise<string> {
  const root = mkdtempSync(join(dir, 'repo-'));
  files(root);
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: root });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'x');
  return root;
}

describe('registry datasets (git fetch)', () => {
  it('reads owner/name from the URL forms Harbor registries use', () => {
    expect(repoOfUrl('https://github.com/laude-institute/terminal-bench-datasets.git')).toBe(
      'laude-institute/terminal-bench-datasets',
    );
    expect(repoOfUrl('git@github.com:acme/tasks.git')).toBe('acme/tasks');
    expect(repoOfUrl('https://example.invalid/x')).toBeUndefined();
  });

  it('refuses a task path that is a link in the repository to a host folder', async () => {
    const host = join(dir, 'host-secrets');
    mkdirSync(host);
    writeFileSync(join(host, 'task.toml'), '[agent]\n');
    const repo = await repoWith((root) => {
      mkdirSync(join(root, 'tasks'));
      symlinkSync(host, join(root, 'tasks', 'calc'));
    });
    const file = join(dir, 'registry.json');
    writeFileSync(
      file,
      JSON.stringify([
        { name: 'd', version: '1', tasks: [{ name: 'calc', git_url: repo, path: 'tasks/calc' }] },
      ]),
    );
    const [dataset] = readRegistry(file);
    await expect(fetchDataset(dataset as never, file, { cacheDir: join(dir, 'cache') })).rejects.toThrow(
      'calc: tasks/calc is a symbolic link in the repository (or lies under one); a folder was expected',
    );
  });

  it('--registry-url file:// is read like --registry-path; a task without git_url is a folder beside the file', async () => {
    const base = mkdtempSync(join(dir, 'local-'));
    mkdirSync(join(base, 'tasks', 'one'), { recursive: true });
    writeFileSync(join(base, 'tasks', 'one', 'task.toml'), '[agent]\ntimeout_sec = 1.0\n');
    const file = join(base, 'registry.json');
    writeFileSync(
      file,
      JSON.stringify([{ name: 'loc', version: '0.1', tasks: [{ name: 'org/one', path: 'tasks/one' }] }]),
    );
    // berth's cache root for this test only.
    const before = process.env.BERTH_CACHE_DIR;
    process.env.BERTH_CACHE_DIR = join(base, 'cache');
    onTestFinished(() => {
      if (before === undefined) delete process.env.BERTH_CACHE_DIR;
      else process.env.BERTH_CACHE_DIR = before;
    });
    const folder = await registryDatasetPath(
      { dataset: 'loc', registryUrl: pathToFileURL(file).href },
      undefined,
    );
    expect(folder?.startsWith(join(base, 'cache', 'registry', 'datasets'))).toBe(true);
    expect(readFileSync(join(folder as string, 'one', 'task.toml'), 'utf8')).toContain('timeout_sec = 1.0');
  });

  it('names the entry of a file that is not Harbor’s registry format', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([{ name: 'd', version: '1', tasks: [{ name: 'x' }] }]));
    expect(() => readRegistry(file)).toThrow(/: \[0\]\.tasks\[0\]\.path: /);
  });
});
