import { execFileSync } from 'node:child_process';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { commitBase, writeSnapshot } from '../../src/environments/local/materialise.ts';
import type { RepositorySnapshot } from '../../src/tasks/task.ts';
import { pathsAtBase } from '../../src/verifiers/paths-at-base.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const snapshot: RepositorySnapshot = {
  files: { 'lib.sh': 'VALUE=1\n', 'tests/check.sh': 'echo check\n', 'tests/data.txt': 'x\n' },
  binaryFiles: { 'tests/blob.bin': Buffer.from([0, 1, 2, 255]).toString('base64') },
  symlinks: { 'tests/link': 'data.txt' },
  executables: ['tests/check.sh'],
};
const touched = ['tests/check.sh', 'tests/blob.bin', 'tests/link', 'tests/new/test_new.sh'];

/** What the verifier's reset step lists as the agent's changes among `paths` (git diff and untracked files). */
function gitListed(repo: string, base: string, paths: readonly string[]): string[] {
  const git = (...args: string[]) =>
    execFileSync('git', ['--literal-pathspecs', ...args, '--', ...paths], {
      cwd: repo,
      stdio: 'pipe',
    }).toString();
  return [
    ...git('diff', '--name-only', '--no-renames', base).split('\n'),
    ...git('ls-files', '--others').split('\n'),
  ]
    .filter((line) => line !== '')
    .sort();
}

describe('pathsAtBase (the files the test patch touches, read by berth)', () => {
  let repo: string;
  beforeEach(async () => {
    repo = join(await temp.make('berth-at-base-'), 'repo');
    await writeSnapshot(repo, snapshot);
  });

  it('is true for a repository written from the snapshot (text, binary, link, executable, absent)', async () => {
    expect(await pathsAtBase(repo, snapshot, touched)).toBe(true);
  });

  it('is false when a touched file has other content, even one byte', async () => {
    await writeFile(join(repo, 'tests/check.sh'), 'echo check!\n');
    expect(await pathsAtBase(repo, snapshot, touched)).toBe(false);
  });

  it('is false when a touched file is longer than its base (the read is capped at the base size)', async () => {
    await writeFile(join(repo, 'tests/check.sh'), 'echo check\nexit 0\n');
    expect(await pathsAtBase(repo, snapshot, touched)).toBe(false);
  });

  it('is false when only the executable bit changed (git records it)', async () => {
    await chmod(join(repo, 'tests/check.sh'), 0o644);
    expect(await pathsAtBase(repo, snapshot, touched)).toBe(false);
  });

  it('is false when a file the test patch creates is already there', async () => {
    await mkdir(join(repo, 'tests/new'));
    await writeFile(join(repo, 'tests/new/test_new.sh'), 'echo forged\n');
    expect(await pathsAtBase(repo, snapshot, touched)).toBe(false);
  });

  it('is false when a folder on the way is a link, even to an identical copy', async () => {
    const copy = join(repo, '..', 'copy');
    await writeSnapshot(copy, snapshot);
    await rm(join(repo, 'tests'), { recursive: true });
    await symlink(join(copy, 'tests'), join(repo, 'tests'));
    expect(await pathsAtBase(repo, snapshot, ['tests/check.sh'])).toBe(false);
  });

  it('is false when a touched file became a link to identical content, or a link another target', async () => {
    await rm(join(repo, 'tests/data.txt'));
    await symlink('check.sh', join(repo, 'tests/data.txt'));
    expect(await pathsAtBase(repo, snapshot, ['tests/data.txt'])).toBe(false);
    await rm(join(repo, 'tests/link'));
    await symlink('check.sh', join(repo, 'tests/link'));
    expect(await pathsAtBase(repo, snapshot, ['tests/link'])).toBe(false);
  });

  it('is false when a file became a folder, or a file stands where a folder on the way should be', async () => {
    await rm(join(repo, 'tests/data.txt'));
    await mkdir(join(repo, 'tests/data.txt'));
    expect(await pathsAtBase(repo, snapshot, ['tests/data.txt'])).toBe(false);
    await writeFile(join(repo, 'tests/new'), 'a file\n');
    expect(await pathsAtBase(repo, snapshot, ['tests/new/test_new.sh'])).toBe(false);
  });

  it('is false when a touched file has another name too (a hard link)', async () => {
    const { link } = await import('node:fs/promises');
    await link(join(repo, 'tests/data.txt'), join(repo, 'data-again.txt'));
    expect(await pathsAtBase(repo, snapshot, ['tests/data.txt'])).toBe(false);
  });

  it('is false whatever the disk holds when git may have converted the base (.gitattributes, carriage returns)', async () => {
    for (const [file, text] of [
      ['.gitattributes', '* text\n'],
      ['tests/.gitattributes', '*.sh eol=crlf\n'],
      ['tests/.gitattributes', '# binary data\n*.bin -text\n*.sh filter=upper\n'],
      ['.gitattributes', '*.toml -text\n* ident\n'],
      ['.gitattributes', '* !text\n'],
      ['.gitattributes', '* working-tree-encoding=UTF-16\n'],
      ['.gitattributes', '[attr]plain -text\n* plain\n'],
      ['tests/.gitattributes', '"check.sh" -text\n'],
    ] as const) {
      const attributes = { ...snapshot, files: { ...snapshot.files, [file]: text } };
      const dir = join(repo, '..', `attributes-${file.length}-${text.length}`);
      await writeSnapshot(dir, attributes);
      expect(await pathsAtBase(dir, attributes, touched), `${file}: ${text}`).toBe(false);
    }
    const binary = {
      ...snapshot,
      binaryFiles: { ...snapshot.binaryFiles, 'tests/.gitattributes': 'LXRleHQK' },
    };
    expect(await pathsAtBase(repo, binary, touched)).toBe(false);
    const crlf = { ...snapshot, files: { ...snapshot.files, 'tests/check.sh': 'echo check\r\n' } };
    const repo3 = join(repo, '..', 'crlf');
    await writeSnapshot(repo3, crlf);
    expect(await pathsAtBase(repo3, crlf, ['tests/check.sh'])).toBe(false);
  });

  it("reads only the .gitattributes on a touched path's way, and lets conversion-free ones through (git agrees)", async () => {
    // BurntSushi/toml's `internal/toml-test/tests/.gitattributes` (`*.toml -text`), whose rows'
    // test patches touch files below it and beside it: the reset ran for nothing (4 git processes).
    for (const [file, text] of [
      ['docs/.gitattributes', '* text eol=crlf\n'],
      ['tests/new/sub/.gitattributes', '* eol=crlf\n'],
      ['tests/.gitattributes', '*.sh  -text\n\n  # comment\n*.bin binary\n* -diff linguist-generated=true\n'],
      ['.gitattributes', '*.txt -text -ident export-ignore merge=ours diff=go whitespace=-trailing\r\n'],
    ] as const) {
      const attributes = { ...snapshot, files: { ...snapshot.files, [file]: text } };
      const dir = join(repo, '..', `attributes-ok-${file.length}-${text.length}`);
      await writeSnapshot(dir, attributes);
      expect(await pathsAtBase(dir, attributes, touched), `${file}: ${text}`).toBe(true);
      // What the reset would do: every touched file removed and checked out of the base commit.
      const base = await commitBase(dir);
      const present = touched.filter((path) => !path.startsWith('tests/new/'));
      for (const path of present) await rm(join(dir, path));
      execFileSync('git', ['checkout', '-q', base, '--', ...present], { cwd: dir, stdio: 'pipe' });
      expect(gitListed(dir, base, touched)).toEqual([]);
      expect(await pathsAtBase(dir, attributes, touched), `${file}, after git's checkout`).toBe(true);
    }
    // Where one applies and converts, git's checkout writes other bytes than the snapshot's.
    const crlf = { ...snapshot, files: { ...snapshot.files, 'tests/.gitattributes': '*.sh eol=crlf\n' } };
    const dir = join(repo, '..', 'attributes-crlf');
    await writeSnapshot(dir, crlf);
    const base = await commitBase(dir);
    await rm(join(dir, 'tests/check.sh'));
    execFileSync('git', ['checkout', '-q', base, '--', 'tests/check.sh'], { cwd: dir, stdio: 'pipe' });
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(join(dir, 'tests/check.sh'), 'utf8')).toBe('echo check\r\n');
  });

  it("agrees with git's listing against berth's base commit of the snapshot", async () => {
    const base = await commitBase(repo);
    expect(await pathsAtBase(repo, snapshot, touched)).toBe(true);
    expect(gitListed(repo, base, touched)).toEqual([]);
    const changes: [string, () => Promise<void>][] = [
      ['tests/check.sh', () => chmod(join(repo, 'tests/check.sh'), 0o644)],
      ['tests/blob.bin', () => writeFile(join(repo, 'tests/blob.bin'), Buffer.from([0, 1, 2]))],
      [
        'tests/link',
        async () => {
          await rm(join(repo, 'tests/link'));
          await symlink('check.sh', join(repo, 'tests/link'));
        },
      ],
      [
        'tests/new/test_new.sh',
        async () => {
          await mkdir(join(repo, 'tests/new'));
          await writeFile(join(repo, 'tests/new/test_new.sh'), 'echo forged\n');
        },
      ],
    ];
    for (const [path, change] of changes) {
      await change();
      expect(await pathsAtBase(repo, snapshot, touched)).toBe(false);
      expect(await pathsAtBase(repo, snapshot, [path])).toBe(false);
      expect(gitListed(repo, base, [path])).toEqual([path]);
    }
  });

  it('is false when a touched path is a folder at base', async () => {
    expect(await pathsAtBase(repo, snapshot, ['tests'])).toBe(false);
  });
});
