import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

/** A real `git diff` from `before` to `after` (path -> content; null deletes). */
export async function makeDiff(
  before: Record<string, string>,
  after: Record<string, string | null>,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-diff-'));
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
  try {
    await git('init', '-q');
    for (const [path, content] of Object.entries(before)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    await git('add', '-A');
    await git('commit', '-qm', 'before', '--allow-empty');
    for (const [path, content] of Object.entries(after)) {
      if (content === null) await rm(join(dir, path));
      else {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content);
      }
    }
    await git('add', '-A');
    return `${(await git('diff', '--cached')).stdout}\n`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
