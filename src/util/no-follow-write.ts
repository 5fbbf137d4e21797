/**
 * Writing into a folder that untrusted code can also write (an agent's log folder: bound into
 * the local sandbox, mounted at /logs/agent in containers) without following a link it
 * planted: berth runs as root, and a link `exit-code.txt -> /root/.bashrc` made by an agent
 * would otherwise have berth overwrite a host file. Every folder from `root` down to the file
 * is checked with lstat (a link or a non-folder in the way is removed, then made a folder),
 * a link or non-file at the file's own name is removed, and the file is opened with
 * O_NOFOLLOW. An agent process still running could race these steps; the trial ends every
 * agent process before the verifier.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

async function kind(path: string): Promise<'missing' | 'dir' | 'file' | 'other'> {
  try {
    const s = await lstat(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

/**
 * Writes `content` to `path` (inside `root`) following no link on the way.
 * @throws Error when `path` is not inside `root`
 */
export async function writeFileNoFollow(
  root: string,
  path: string,
  content: string | Uint8Array,
): Promise<void> {
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`${path} is not inside ${root}`);
  if ((await kind(root)) !== 'dir') {
    await rm(root, { force: true });
    await mkdir(root, { recursive: true });
  }
  let dir = root;
  for (const part of dirname(rel)
    .split(sep)
    .filter((p) => p !== '' && p !== '.')) {
    dir = join(dir, part);
    const k = await kind(dir);
    if (k === 'dir') continue;
    if (k !== 'missing') await rm(dir, { force: true });
    await mkdir(dir);
  }
  const k = await kind(path);
  if (k === 'dir') await rm(path, { recursive: true, force: true });
  else if (k === 'other') await rm(path, { force: true });
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
