/**
 * Materialises a repository in a fresh folder, committed as the single base
 * commit with nothing else reachable: no later commits, refs, tags, reflog or
 * stray objects. From a snapshot the files are written; from a mirror the base
 * commit's tree is checked out through a throw-away index (never a clone, and
 * unlike `git archive` it keeps `export-ignore` files such as tests).
 */
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import type { RepositorySnapshot } from '../../tasks/task.ts';

/** Fixed identity and dates, so the same files always give the same base commit sha. */
export const BASE_COMMIT_ENV = {
  GIT_AUTHOR_NAME: 'berth',
  GIT_AUTHOR_EMAIL: 'berth@localhost',
  GIT_COMMITTER_NAME: 'berth',
  GIT_COMMITTER_EMAIL: 'berth@localhost',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
};

/** Writes a snapshot's files, binary files, symlinks and executable bits under `dir`. */
export async function writeSnapshot(dir: string, snapshot: RepositorySnapshot): Promise<void> {
  const made = new Set<string>();
  const ensureDir = async (path: string) => {
    const parent = dirname(path);
    if (!made.has(parent)) {
      await mkdir(parent, { recursive: true });
      made.add(parent);
    }
  };
  for (const [path, content] of Object.entries(snapshot.files)) {
    const full = join(dir, path);
    await ensureDir(full);
    await writeFile(full, content, 'utf8');
  }
  for (const [path, content] of Object.entries(snapshot.binaryFiles ?? {})) {
    const full = join(dir, path);
    await ensureDir(full);
    await writeFile(full, Buffer.from(content, 'base64'));
  }
  for (const [path, target] of Object.entries(snapshot.symlinks ?? {})) {
    const full = join(dir, path);
    await ensureDir(full);
    await symlink(target, full);
  }
  for (const path of snapshot.executables ?? []) await chmod(join(dir, path), 0o755);
}

/** Checks out `commit` of the mirror `gitDir` into `dir` without touching the mirror's refs or index. */
export async function checkoutFromMirror(gitDir: string, commit: string, dir: string): Promise<void> {
  const index = join(dirname(dir), `.berth-index-${process.pid}-${Date.now()}`);
  const env = { GIT_INDEX_FILE: index, GIT_DIR: gitDir, GIT_WORK_TREE: dir };
  try {
    await mkdir(dir, { recursive: true });
    await execa('git', ['read-tree', `${commit}^{tree}`], { env });
    await execa('git', ['checkout-index', '--all', '--force', `--prefix=${dir}/`], { env });
  } finally {
    await rm(index, { force: true });
  }
}

/**
 * Makes `dir` a fresh git repository whose only commit holds its current files.
 * @returns the sha of that base commit.
 */
export async function commitBase(dir: string): Promise<string> {
  const env = { ...process.env, ...BASE_COMMIT_ENV };
  const git = (...args: string[]) =>
    execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false', ...args], {
      cwd: dir,
      env,
    });
  await git('init', '-q', '--template=', '-b', 'main');
  await git('config', 'user.name', 'berth');
  await git('config', 'user.email', 'berth@localhost');
  await git('config', 'core.hooksPath', '/dev/null');
  await git('add', '-A', '-f', '.');
  await git('commit', '-q', '--allow-empty', '--no-verify', '-m', 'base');
  const { stdout } = await git('rev-parse', 'HEAD');
  return stdout.trim();
}
