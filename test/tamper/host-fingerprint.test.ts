/** berth's own fingerprint of a local environment's repository (no shell), on real folders and git. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hostFingerprints,
  indexEntries,
  listingState,
  parseListing,
  sameListing,
} from '../../src/verifiers/tampering/host-fingerprint.ts';
import { compareFingerprints, runnerListingScript } from '../../src/verifiers/tampering/run-check.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir }).toString();
const listing = (dir: string) =>
  parseListing(execFileSync('sh', ['-c', runnerListingScript()], { cwd: dir }).toString()) ?? [];

async function repo(): Promise<string> {
  const dir = await temp.make('berth-host-fingerprint-');
  mkdirSync(join(dir, 'tests'));
  writeFileSync(join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert 1\n');
  writeFileSync(join(dir, 'tests', 'conftest.py'), '');
  writeFileSync(join(dir, '.gitignore'), 'build/\n');
  mkdirSync(join(dir, 'node_modules', 'x'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'x', 'conftest.py'), '');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'base');
  return dir;
}

describe("berth's own fingerprint of test and runner files", () => {
  it('hashes files, records links by target, and sees a file rewritten with the same bytes', async () => {
    const dir = await repo();
    const paths = ['tests/test_a.py', ...listing(dir)];
    expect(listing(dir)).toEqual(['tests/conftest.py']);
    const before = await hostFingerprints(dir, paths);
    expect([...before.keys()].sort()).toEqual(['tests/conftest.py', 'tests/test_a.py']);
    expect(compareFingerprints(before, await hostFingerprints(dir, paths))).toBeUndefined();
    // Same bytes, written again: another status change time.
    writeFileSync(join(dir, 'tests', 'conftest.py'), '');
    const restored = compareFingerprints(before, await hostFingerprints(dir, paths));
    expect(restored?.message).toContain('written and put back');
    // A link in place of the test file: recorded by its target, never followed.
    renameSync(join(dir, 'tests', 'test_a.py'), join(dir, 'real.py'));
    symlinkSync(join(dir, 'real.py'), join(dir, 'tests', 'test_a.py'));
    const linked = compareFingerprints(before, await hostFingerprints(dir, paths));
    expect(linked?.paths).toContain('tests/test_a.py');
  });

  it('never follows a link on the way to a file', async () => {
    const dir = await repo();
    const before = await hostFingerprints(dir, ['tests/test_a.py']);
    renameSync(join(dir, 'tests'), join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(dir, 'tests'));
    const after = await hostFingerprints(dir, ['tests/test_a.py']);
    expect(after.get('tests/test_a.py')).not.toBe(before.get('tests/test_a.py'));
    expect(compareFingerprints(before, after)?.kind).toBe('changed-during-run');
  });

  it("git's list is known unchanged only when no runner file appeared and ignoring and tracking did not change", async () => {
    const dir = await repo();
    const before = await listingState(dir);
    expect(before.complete).toBe(true);
    expect(before.walked).toBe(true);
    // node_modules is left out, as git's pathspec leaves it out.
    expect([...before.runnerNames]).toEqual(['tests/conftest.py']);
    // Ordinary files the tests write change nothing.
    writeFileSync(join(dir, 'tests', 'output.txt'), 'x');
    mkdirSync(join(dir, 'node_modules', 'y'));
    writeFileSync(join(dir, 'node_modules', 'y', 'pytest.ini'), '');
    expect(sameListing(before, await listingState(dir))).toBe(true);
    // A new runner file, even an ignored one: the walk has it (the verifier fingerprints it,
    // breaker7: pytest reads a conftest.py git ignores).
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build', 'setup.cfg'), '');
    const after = await listingState(dir);
    expect(sameListing(before, after)).toBe(false);
    expect([...after.runnerNames].sort()).toEqual(['build/setup.cfg', 'tests/conftest.py']);
  });

  it('a changed .gitignore, git index or a new .gitignore makes git list again', async () => {
    const dir = await repo();
    const before = await listingState(dir);
    writeFileSync(join(dir, '.gitignore'), 'build/\nconftest.py\n');
    expect(sameListing(before, await listingState(dir))).toBe(false);
    const second = await listingState(dir);
    git(dir, 'rm', '-q', '--cached', 'tests/conftest.py');
    expect(sameListing(second, await listingState(dir))).toBe(false);
    const third = await listingState(dir);
    writeFileSync(join(dir, 'tests', '.gitignore'), '*\n');
    expect(sameListing(third, await listingState(dir))).toBe(false);
  });

  it('cannot stand for git when .git is a link or the configuration reads other files', async () => {
    const linked = await repo();
    renameSync(join(linked, '.git'), join(linked, 'gitdir'));
    symlinkSync(join(linked, 'gitdir'), join(linked, '.git'));
    expect((await listingState(linked)).complete).toBe(false);
    const included = await repo();
    git(included, 'config', 'core.excludesFile', join(included, 'my-excludes'));
    expect((await listingState(included)).complete).toBe(false);
  });

  it('a name that is not UTF-8 is left to the shell', async () => {
    const dir = await repo();
    const odd = Buffer.concat([
      Buffer.from(join(dir, 'tests', 'odd-')),
      Buffer.from([0xff]),
      Buffer.from('/'),
    ]);
    mkdirSync(odd);
    writeFileSync(Buffer.concat([odd, Buffer.from('conftest.py')]), '');
    expect(
      parseListing(execFileSync('sh', ['-c', runnerListingScript()], { cwd: dir }).toString()),
    ).toBeUndefined();
    expect((await listingState(dir)).complete).toBe(false);
    // The walk stops at such a name: the verifier vetoes a run that made one (judge.ts).
    expect((await listingState(dir)).walked).toBe(false);
  });
});

describe("a git index's entries without their file times", () => {
  for (const version of ['2', '3', '4']) {
    it(`version ${version}: the same after git refreshes the times, another after git rm --cached`, async () => {
      const dir = await repo();
      mkdirSync(join(dir, 'deep', 'er'), { recursive: true });
      writeFileSync(join(dir, 'deep', 'er', 'a-long-name-for-prefixes.py'), 'x');
      writeFileSync(join(dir, 'deep', 'er', 'a-long-name-for-prefixes2.py'), 'y');
      git(dir, 'add', '-A');
      git(dir, 'update-index', '--index-version', version);
      if (version === '3') git(dir, 'update-index', '--skip-worktree', 'tests/test_a.py');
      const read = () => indexEntries(readFileSync(join(dir, '.git', 'index')));
      const before = read();
      expect(before).toBeDefined();
      expect(before?.split('\n').map((e) => e.split('\0')[0])).toEqual([
        '.gitignore',
        'deep/er/a-long-name-for-prefixes.py',
        'deep/er/a-long-name-for-prefixes2.py',
        'node_modules/x/conftest.py',
        'tests/conftest.py',
        'tests/test_a.py',
      ]);
      // New file times (what `git status` / `git describe --dirty` write back).
      writeFileSync(join(dir, 'deep', 'er', 'a-long-name-for-prefixes.py'), 'x');
      git(dir, 'update-index', '--really-refresh');
      expect(read()).toBe(before);
      git(dir, 'rm', '-q', '--cached', 'tests/conftest.py');
      expect(read()).not.toBe(before);
    });
  }

  it('refuses what it cannot read as a whole (cut short, an untracked cache)', async () => {
    const dir = await repo();
    const index = readFileSync(join(dir, '.git', 'index'));
    expect(indexEntries(index)).toBeDefined();
    expect(indexEntries(index.subarray(0, index.length - 30))).toBeUndefined();
    git(dir, 'config', 'core.untrackedCache', 'true');
    git(dir, 'update-index', '--untracked-cache');
    git(dir, 'status', '--porcelain');
    expect(indexEntries(readFileSync(join(dir, '.git', 'index')))).toBeUndefined();
  });
});
