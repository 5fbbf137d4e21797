/**
 * Fetching a registry dataset's tasks with git (src/tasks/harbor/registry-dataset.ts), without
 * Docker: a hostile repository whose task path is a link to a host folder is refused.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchDataset, readRegistry, repoOfUrl } from '../../src/tasks/harbor/registry-dataset.ts';

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

  it('names the entry of a file that is not Harbor’s registry format', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([{ name: 'd', version: '1', tasks: [{ name: 'x' }] }]));
    expect(() => readRegistry(file)).toThrow(/field `?\[0\]\.tasks\[0\]\.path/);
  });
});
