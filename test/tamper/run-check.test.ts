/** The fingerprint of test and runner files, run by a real shell on a real repository. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostFingerprints } from '../../src/verifiers/tampering/host-fingerprint.ts';
import {
  compareFingerprints,
  fingerprintScript,
  parseFingerprints,
} from '../../src/verifiers/tampering/run-check.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const fingerprint = (dir: string, testFiles: string[]) =>
  parseFingerprints(
    execFileSync('sh', ['-c', fingerprintScript(testFiles)], { cwd: dir, timeout: 20_000 }).toString(),
  );

describe('fingerprints of test and runner files', () => {
  it('sees a changed test file, a runner file written during the run, a link and a fifo, and never follows or hangs', async () => {
    const dir = await temp.make('berth-fingerprint-');
    mkdirSync(join(dir, 'tests'));
    writeFileSync(join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert False\n');
    writeFileSync(join(dir, 'README.md'), 'x\n');
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const before = fingerprint(dir, ['tests/test_a.py', 'tests/new_in_patch.py']);
    expect([...before.keys()]).toEqual(['tests/test_a.py']);

    writeFileSync(join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert True\n');
    writeFileSync(join(dir, 'tests', 'conftest.py'), 'collect_ignore = []\n');
    symlinkSync('/etc/passwd', join(dir, 'setup.cfg'));
    execFileSync('mkfifo', [join(dir, 'pytest.ini')]);
    writeFileSync(join(dir, 'README.md'), 'y\n');
    writeFileSync(join(dir, 'tests', 'pytest.toml'), '[pytest]\n');
    const after = fingerprint(dir, ['tests/test_a.py', 'tests/new_in_patch.py']);
    const finding = compareFingerprints(before, after);
    expect(finding?.kind).toBe('changed-during-run');
    // A fifo is listed (find) but neither hashed nor waited on.
    expect(finding?.paths).toEqual([
      'pytest.ini',
      'setup.cfg',
      'tests/conftest.py',
      'tests/pytest.toml',
      'tests/test_a.py',
    ]);
    expect(compareFingerprints(after, fingerprint(dir, ['tests/test_a.py']))).toBeUndefined();
  });

  it('sees runner files the run hid from git: ignored, excluded, or behind another core.worktree (breaker7)', async () => {
    const dir = await temp.make('berth-fingerprint-');
    mkdirSync(join(dir, 'tests'));
    writeFileSync(join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert False\n');
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const before = fingerprint(dir, ['tests/test_a.py']);
    // The run tells git to ignore what it writes, and to look at another folder altogether.
    writeFileSync(join(dir, '.gitignore'), 'extra/\n');
    mkdirSync(join(dir, 'tests', 'extra'));
    writeFileSync(join(dir, 'tests', 'extra', 'conftest.py'), 'import pytest\n');
    mkdirSync(join(dir, '.git', 'info'), { recursive: true });
    writeFileSync(join(dir, '.git', 'info', 'exclude'), 'conftest.py\n');
    writeFileSync(join(dir, 'tests', 'conftest.py'), 'import pytest\n');
    const elsewhere = await temp.make('berth-fingerprint-elsewhere-');
    execFileSync('git', ['config', 'core.worktree', elsewhere], { cwd: dir });
    const finding = compareFingerprints(before, fingerprint(dir, ['tests/test_a.py']));
    expect(finding?.paths).toEqual(['tests/conftest.py', 'tests/extra/conftest.py']);
  });

  it('sees a test file written during the run and put back byte for byte (its status change time)', async () => {
    const dir = await temp.make('berth-fingerprint-');
    mkdirSync(join(dir, 'tests'));
    const original = 'def test_a():\n    assert False\n';
    writeFileSync(join(dir, 'tests', 'test_a.py'), original);
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const before = fingerprint(dir, ['tests/test_a.py']);
    expect(before.get('tests/test_a.py')).toMatch(/^[0-9a-f]{64} \d+_\S+$/);
    // File times move in clock ticks (a few ms): the run lasts longer than that.
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert True\n');
    writeFileSync(join(dir, 'tests', 'test_a.py'), original);
    const finding = compareFingerprints(before, fingerprint(dir, ['tests/test_a.py']));
    expect(finding?.paths).toEqual(['tests/test_a.py']);
    expect(finding?.message).toContain('put back with the same content');
  });

  it("gives a file's status only to its own hash line (an unreadable file's status goes with no other)", () => {
    const hash = (c: string) => c.repeat(64);
    const text = [
      's:12_2026-12-01 23:04:36.950201627 +0000',
      `${hash('a')}  tests/test_a.py`,
      // A regular file whose stat answered and whose content could not be read: an empty line.
      's:13_2026-12-01 23:04:37.000000000 +0000',
      '',
      `${hash('b')}  link-to-somewhere`,
      `\\${hash('c')}  odd\\nname.py`,
    ].join('\n');
    expect([...parseFingerprints(text)]).toEqual([
      ['tests/test_a.py', `${hash('a')} 12_2026-12-01_23:04:36.950201627_+0000`],
      ['link-to-somewhere', hash('b')],
      ['odd\\nname.py', hash('c')],
    ]);
  });

  it('an entry points file the run writes is refused only when it declares a pytest plugin (shell and host)', async () => {
    const dir = await temp.make('berth-fingerprint-');
    mkdirSync(join(dir, 'tests'));
    writeFileSync(join(dir, 'tests', 'test_a.py'), 'def test_a():\n    pass\n');
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const paths = [
      'pkg.egg-info/entry_points.txt',
      'evil.dist-info/entry_points.txt',
      'x.egg-info/entry_points.txt',
    ];
    const host = () => hostFingerprints(dir, paths);
    const shell = async () => fingerprint(dir, []);
    for (const take of [shell, host]) {
      for (const name of ['pkg.egg-info', 'evil.dist-info', 'x.egg-info'])
        execFileSync('rm', ['-rf', join(dir, name)]);
      const before = await take();
      // `pip install -e .` (console scripts): no finding, made or rewritten.
      mkdirSync(join(dir, 'pkg.egg-info'));
      writeFileSync(join(dir, 'pkg.egg-info', 'entry_points.txt'), '[console_scripts]\npkg = pkg:main\n');
      const pip = await take();
      expect(compareFingerprints(before, pip), take.name).toBeUndefined();
      writeFileSync(join(dir, 'pkg.egg-info', 'entry_points.txt'), '[console_scripts]\npkg = pkg:main\n');
      expect(compareFingerprints(pip, await take()), take.name).toBeUndefined();
      // A pytest plugin declared (with blanks around the group's name), or a link: refused.
      mkdirSync(join(dir, 'evil.dist-info'));
      writeFileSync(
        join(dir, 'evil.dist-info', 'entry_points.txt'),
        '[console_scripts]\nx = y\n  [ pytest11 ]\nz = evil\n',
      );
      mkdirSync(join(dir, 'x.egg-info'));
      symlinkSync('/etc/hostname', join(dir, 'x.egg-info', 'entry_points.txt'));
      expect(compareFingerprints(pip, await take())?.paths, take.name).toEqual([
        'evil.dist-info/entry_points.txt',
        'x.egg-info/entry_points.txt',
      ]);
    }
  });

  it('refuses runner files whose names are not UTF-8 text: two such folders read as one name, and a change to one hid behind the other (trust12)', async () => {
    const dir = await temp.make('berth-fingerprint-');
    // d\376/conftest.py and d\377/conftest.py: read as UTF-8 both are d\uFFFD/conftest.py.
    const folder = (byte: number) => Buffer.concat([Buffer.from(`${dir}/d`), Buffer.from([byte])]);
    const conftest = (byte: number) => Buffer.concat([folder(byte), Buffer.from('/conftest.py')]);
    for (const byte of [0xfe, 0xff]) {
      mkdirSync(folder(byte));
      writeFileSync(conftest(byte), 'collect_ignore = []\n');
    }
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const before = fingerprint(dir, []);
    expect([...before.keys()]).toEqual(['d\uFFFD/conftest.py']);
    // One line overwrote the other: the run rewrites the file whose line was not kept.
    const kept = before.get('d\uFFFD/conftest.py')?.split(' ')[1]?.split('_')[0];
    const hidden = [0xfe, 0xff].find((byte) => String(statSync(conftest(byte)).ino) !== kept) as number;
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(conftest(hidden), 'import os\nos.environ["FORGED"] = "1"\n');
    const finding = compareFingerprints(before, fingerprint(dir, []));
    expect(finding?.kind).toBe('undecodable-name');
    expect(finding?.veto).toBe(true);
    expect(finding?.paths).toEqual(['d\uFFFD/conftest.py']);
  });
});
