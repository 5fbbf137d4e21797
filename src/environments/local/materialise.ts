/**
 * Materialises a repository in a fresh folder, committed as the single base
 * commit with nothing else reachable: no later commits, refs, tags, reflog or
 * stray objects. From a snapshot the files are written; from a mirror the base
 * commit's tree is checked out through a throw-away index (never a clone, and
 * unlike `git archive` it keeps `export-ignore` files such as tests).
 */
import { appendFile, chmod, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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

/** berth's settings in the base repository's `.git/config` (written directly, no `git config` process). */
const BASE_CONFIG = '[user]\n\tname = berth\n\temail = berth@localhost\n[core]\n\thooksPath = /dev/null\n';

/**
 * Options for every git call berth makes while materialising: no hooks, no signing, and no
 * automatic `git gc` / `git maintenance` spawned after the commit.
 */
const GIT_OPTIONS = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'commit.gpgSign=false',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
];

/**
 * Makes `dir` a fresh git repository whose only commit holds its current files: three git
 * processes (`init`, `add`, `commit`); the settings are appended to `.git/config` and the
 * commit's sha is read from the branch's ref file.
 * @returns the sha of that base commit.
 */
export async function commitBase(dir: string): Promise<string> {
  const env = { ...process.env, ...BASE_COMMIT_ENV };
  const git = (...args: string[]) => execa('git', [...GIT_OPTIONS, ...args], { cwd: dir, env });
  await git('init', '-q', '--template=', '-b', 'main');
  await appendFile(join(dir, '.git', 'config'), BASE_CONFIG);
  await git('add', '-A', '-f', '.');
  await git('commit', '-q', '--allow-empty', '--no-verify', '-m', 'base');
  const sha = await readFile(join(dir, '.git', 'refs', 'heads', 'main'), 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
  if (/^[0-9a-f]{40,64}$/.test(sha)) return sha;
  // Another ref storage (reftable) or a packed ref: ask git.
  return (await git('rev-parse', 'HEAD')).stdout.trim();
}
