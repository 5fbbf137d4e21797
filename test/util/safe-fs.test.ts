/**
 * safe-fs against planted links, fifos, devices, hard links and swaps while it walks:
 * whatever is planted below the root, nothing outside it is read or written.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  chmod,
  chown,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { afterAll, describe, expect, it } from 'vitest';
import {
  copyInBeneath,
  copyOutBeneath,
  extractTarBeneath,
  readFileBeneath,
  treeDigestBeneath,
  UnsafePathError,
  writeFileBeneath,
} from '../../src/util/safe-fs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const isRoot = process.getuid?.() === 0;

/** A folder outside the root holding a secret file and a folder, to be left unchanged. */
async function victims() {
  const dir = await temp.make('berth-safefs-victim-');
  await writeFile(join(dir, 'secret.txt'), 'secret\n');
  await mkdir(join(dir, 'folder'));
  await writeFile(join(dir, 'folder', 'inside.txt'), 'inside\n');
  return {
    dir,
    file: join(dir, 'secret.txt'),
    folder: join(dir, 'folder'),
    async unchanged() {
      expect(await readFile(join(dir, 'secret.txt'), 'utf8')).toBe('secret\n');
      expect((await readdir(join(dir, 'folder'))).sort()).toEqual(['inside.txt']);
      expect((await readdir(dir)).sort()).toEqual(['folder', 'secret.txt']);
    },
  };
}

describe('readFileBeneath', () => {
  it('reads regular files and reports links, folders, fifos, devices and hard links without opening them', async () => {
    const root = await temp.make('berth-safefs-read-');
    const v = await victims();
    await writeFile(join(root, 'plain.txt'), 'hello');
    await symlink(v.file, join(root, 'link.txt'));
    await symlink(v.folder, join(root, 'dirlink'));
    await symlink('/nonexistent/x', join(root, 'dangling'));
    await mkdir(join(root, 'sub'));
    spawnSync('mkfifo', [join(root, 'fifo')]);
    await link(v.file, join(root, 'hard.txt'));
    if (isRoot) spawnSync('mknod', [join(root, 'null'), 'c', '1', '3']);

    const plain = await readFileBeneath(root, 'plain.txt');
    expect(plain).toMatchObject({ kind: 'file', truncated: false });
    expect(plain.kind === 'file' && plain.data.toString()).toBe('hello');
    expect(await readFileBeneath(root, 'link.txt')).toEqual({ kind: 'symlink', target: v.file });
    expect(await readFileBeneath(root, 'dangling')).toEqual({ kind: 'symlink', target: '/nonexistent/x' });
    // A link on the way is refused as well (inside.txt exists behind it).
    expect((await readFileBeneath(root, 'dirlink/inside.txt')).kind).toBe('symlink');
    expect((await readFileBeneath(root, 'sub')).kind).toBe('directory');
    expect((await readFileBeneath(root, 'fifo')).kind).toBe('fifo'); // and it did not block
    expect((await readFileBeneath(root, 'hard.txt')).kind).toBe('hardlink');
    if (isRoot) expect((await readFileBeneath(root, 'null')).kind).toBe('char-device');
    expect(await readFileBeneath(root, 'absent')).toEqual({ kind: 'missing' });
    expect(await readFileBeneath(root, 'sub/absent/x')).toEqual({ kind: 'missing' });
    const capped = await readFileBeneath(root, 'plain.txt', { maxBytes: 2 });
    expect(capped.kind === 'file' && [capped.data.toString(), capped.truncated]).toEqual(['he', true]);
    await expect(readFileBeneath(root, '../x')).rejects.toThrow(UnsafePathError);
    await v.unchanged();
  });
});

describe('writeFileBeneath', () => {
  it('replaces a planted link, fifo or dangling link at the name and never writes through it', async () => {
    const root = await temp.make('berth-safefs-write-');
    const v = await victims();
    await symlink(v.file, join(root, 'to-file.txt'));
    await symlink(v.folder, join(root, 'to-folder'));
    await symlink('/nonexistent/berth-x', join(root, 'dangling.txt'));
    spawnSync('mkfifo', [join(root, 'fifo.txt')]);
    for (const name of ['to-file.txt', 'to-folder', 'dangling.txt', 'fifo.txt', 'new/deep/file.txt']) {
      await writeFileBeneath(root, name, `berth ${name}\n`);
      const back = await readFileBeneath(root, name);
      expect(back.kind === 'file' && back.data.toString()).toBe(`berth ${name}\n`);
    }
    expect(existsSync('/nonexistent/berth-x')).toBe(false);
    await v.unchanged();
  });

  it('refuses a link where a folder on the way should be', async () => {
    const root = await temp.make('berth-safefs-write-');
    const v = await victims();
    await symlink(v.folder, join(root, 'command'));
    await expect(writeFileBeneath(root, 'command/return-code.txt', '0\n')).rejects.toThrow(UnsafePathError);
    await writeFile(join(root, 'file'), 'x');
    await expect(writeFileBeneath(root, 'file/x.txt', '0\n')).rejects.toThrow(UnsafePathError);
    await v.unchanged();
  });
});

describe('copyOutBeneath', () => {
  it('copies regular files and folders, records links and special files, keeps names already there', async () => {
    const source = await temp.make('berth-safefs-src-');
    const dest = join(await temp.make('berth-safefs-dest-'), 'agent');
    const v = await victims();
    await mkdir(join(source, 'agent', 'command'), { recursive: true });
    await writeFile(join(source, 'agent', 'command', 'stdout.txt'), 'out\n');
    await writeFile(join(source, 'agent', 'run.sh'), '#!/bin/sh\n');
    await chmod(join(source, 'agent', 'run.sh'), 0o755);
    await writeFile(join(source, 'agent', 'instruction.md'), 'forged by the agent');
    await symlink(v.file, join(source, 'agent', 'command', 'return-code.txt'));
    await symlink(v.folder, join(source, 'agent', 'folder-link'));
    await symlink('/nonexistent', join(source, 'agent', 'dangling'));
    spawnSync('mkfifo', [join(source, 'agent', 'fifo')]);
    await link(v.file, join(source, 'agent', 'hard.txt'));
    // The copied folder belongs to another user (the sandbox's): a second name of a file it does not own is refused.
    if (isRoot) {
      spawnSync('mknod', [join(source, 'agent', 'disk'), 'b', '7', '0']);
      await chown(join(source, 'agent'), 65534, 65534);
    }
    // berth's own record, written before the copy: kept.
    await mkdir(dest, { recursive: true });
    await writeFile(join(dest, 'instruction.md'), 'the real instruction');

    const report = await copyOutBeneath(source, 'agent', dest);
    expect(await readFile(join(dest, 'command', 'stdout.txt'), 'utf8')).toBe('out\n');
    expect(await readFile(join(dest, 'instruction.md'), 'utf8')).toBe('the real instruction');
    expect(existsSync(join(dest, 'command', 'return-code.txt'))).toBe(false);
    expect(existsSync(join(dest, 'folder-link'))).toBe(false);
    expect(existsSync(join(dest, 'fifo'))).toBe(false);
    expect(existsSync(join(dest, 'hard.txt'))).toBe(!isRoot);
    const skipped = Object.fromEntries(report.skipped.map((s) => [s.path, s]));
    expect(skipped['command/return-code.txt']).toMatchObject({ kind: 'symlink', target: v.file });
    expect(skipped['folder-link']).toMatchObject({ kind: 'symlink', reason: 'not-regular' });
    expect(skipped.dangling).toMatchObject({ kind: 'symlink' });
    expect(skipped.fifo).toMatchObject({ kind: 'fifo', reason: 'not-regular' });
    if (isRoot) expect(skipped['hard.txt']).toMatchObject({ kind: 'hardlink', reason: 'hardlink' });
    expect(skipped['instruction.md']).toMatchObject({ reason: 'exists' });
    if (isRoot) expect(skipped.disk).toMatchObject({ kind: 'block-device' });
    expect(report).toMatchObject({ files: isRoot ? 2 : 3, directories: 2 });
    await v.unchanged();
  });

  it('caps bytes and entries', async () => {
    const source = await temp.make('berth-safefs-src-');
    for (let i = 0; i < 5; i++) await writeFile(join(source, `f${i}.txt`), 'x'.repeat(100));
    const dest = join(await temp.make('berth-safefs-dest-'), 'out');
    const report = await copyOutBeneath(source, '', dest, { maxBytes: 250 });
    expect(report.bytes).toBe(250);
    expect(report.skipped.map((s) => s.reason).sort()).toEqual(['over-limit', 'over-limit', 'truncated']);
    const byCount = await copyOutBeneath(source, '', `${dest}-2`, { maxEntries: 2 });
    await expect(copyOutBeneath(source, 'absent', `${dest}-3`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(byCount.files).toBe(2);
    expect(byCount.skippedCount).toBe(3);
  });

  it('a folder swapped for a link while it copies never makes it read outside (200 copies under a swapping process)', async () => {
    const source = await temp.make('berth-safefs-race-');
    const v = await victims();
    await mkdir(join(source, 'a'));
    await writeFile(join(source, 'a', 'secret.txt'), 'harmless\n');
    // Swaps `a` between a real folder and a link to the victim folder as fast as it can.
    const swapper = spawn(
      'sh',
      ['-c', `cd ${source} && while :; do mv a a.d && ln -s ${v.dir} a && rm a && mv a.d a; done`],
      { stdio: 'ignore' },
    );
    const out = await temp.make('berth-safefs-race-out-');
    try {
      for (let i = 0; i < 200; i++) {
        const dest = join(out, String(i));
        await copyOutBeneath(source, '', dest);
        const got = await readFileBeneath(dest, 'a/secret.txt');
        if (got.kind === 'file') expect(got.data.toString()).toBe('harmless\n');
        expect(existsSync(join(dest, 'a', 'inside.txt'))).toBe(false);
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    await v.unchanged();
  });
});

async function tarOf(entries: { name: string; type?: string; body?: string; linkname?: string }[]) {
  const p = pack();
  for (const e of entries) {
    p.entry(
      {
        name: e.name,
        type: (e.type ?? 'file') as 'file',
        ...(e.linkname ? { linkname: e.linkname } : {}),
        ...(e.type === 'character-device' ? { devmajor: 1, devminor: 3 } : {}),
      },
      e.body ?? '',
    );
  }
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('extractTarBeneath', () => {
  it('creates files and folders only; links, devices, fifos and `..` names are recorded', async () => {
    const v = await victims();
    const archive = await tarOf([
      { name: 'verifier/', type: 'directory' },
      { name: 'verifier/test-stdout.txt', body: 'ran\n' },
      { name: 'verifier/reward.txt', type: 'symlink', linkname: v.file },
      { name: 'verifier/out', type: 'symlink', linkname: v.folder },
      { name: 'verifier/out/planted.txt', body: 'planted\n' },
      { name: 'verifier/copy.txt', type: 'link', linkname: 'verifier/test-stdout.txt' },
      { name: 'verifier/hard-outside.txt', type: 'link', linkname: v.file },
      { name: 'verifier/../../escape.txt', body: 'escape\n' },
      { name: 'verifier/null', type: 'character-device' },
      { name: 'verifier/fifo', type: 'fifo' },
    ]);
    const dest = join(await temp.make('berth-safefs-tar-'), 'verifier');
    const report = await extractTarBeneath(Readable.from([archive]), dest);
    expect(await readFile(join(dest, 'test-stdout.txt'), 'utf8')).toBe('ran\n');
    expect(await readFile(join(dest, 'copy.txt'), 'utf8')).toBe('ran\n');
    // The archive's link was not created: the file behind it lands in a real folder of the copy.
    expect(await readFile(join(dest, 'out', 'planted.txt'), 'utf8')).toBe('planted\n');
    expect(existsSync(join(dest, 'reward.txt'))).toBe(false);
    expect(existsSync(join(dest, '..', '..', 'escape.txt'))).toBe(false);
    const skipped = Object.fromEntries(report.skipped.map((s) => [s.path, s]));
    expect(skipped['reward.txt']).toMatchObject({ kind: 'symlink', target: v.file });
    expect(skipped['hard-outside.txt']).toMatchObject({ kind: 'hardlink' });
    expect(skipped.null).toMatchObject({ kind: 'char-device' });
    expect(skipped.fifo).toMatchObject({ kind: 'fifo' });
    expect(report.skipped.some((s) => s.reason === 'bad-name')).toBe(true);
    await v.unchanged();
  });

  it('a single file archive lands at the destination itself; sizes are capped', async () => {
    const dest = join(await temp.make('berth-safefs-tar-'), 'reward.txt');
    await extractTarBeneath(Readable.from([await tarOf([{ name: 'reward.txt', body: '1\n' }])]), dest);
    expect(await readFile(dest, 'utf8')).toBe('1\n');
    const big = join(await temp.make('berth-safefs-tar-'), 'big');
    const report = await extractTarBeneath(
      Readable.from([
        await tarOf([
          { name: 'big/', type: 'directory' },
          { name: 'big/a', body: 'x'.repeat(1000) },
        ]),
      ]),
      big,
      { maxBytes: 10 },
    );
    expect((await readFile(join(big, 'a'))).length).toBe(10);
    expect(report.skipped[0]).toMatchObject({ path: 'a', reason: 'truncated', size: 1000 });
  });
});

describe('copy caps: entries, depth, time (a flood in a log folder)', () => {
  /** A folder `depth` levels deep (`d/d/...`) with a file at the bottom, and `files` files beside it. */
  async function flood(depth: number, files: number): Promise<string> {
    const source = await temp.make('berth-safefs-flood-');
    let dir = source;
    for (let i = 0; i < depth; i++) dir = join(dir, 'd');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'deep.txt'), 'x');
    await mkdir(join(source, 'many'));
    for (let i = 0; i < files; i++) await writeFile(join(source, 'many', `f${i}`), '');
    await writeFile(join(source, 'reward.txt'), '1\n');
    return source;
  }

  async function countFiles(dir: string): Promise<{ entries: number; depth: number }> {
    let entries = 0;
    let depth = 0;
    const walk = async (d: string, level: number) => {
      for (const e of await readdir(d, { withFileTypes: true })) {
        entries++;
        depth = Math.max(depth, level);
        if (e.isDirectory()) await walk(join(d, e.name), level + 1);
      }
    };
    await walk(dir, 1);
    return { entries, depth };
  }

  it('copyOutBeneath leaves out what is past the entry and depth caps, and says so', async () => {
    const source = await flood(30, 50);
    const dest = join(await temp.make('berth-safefs-dest-'), 'out');
    const report = await copyOutBeneath(source, '', dest, { maxEntries: 40, maxDepth: 10 });
    const copied = await countFiles(dest);
    expect(copied.entries).toBe(40);
    expect(copied.depth).toBeLessThanOrEqual(10);
    expect(report.files + report.directories).toBe(40);
    const reasons = report.skipped.map((s) => s.reason);
    expect(reasons.filter((r) => r === 'too-deep')).toHaveLength(1);
    expect(reasons.filter((r) => r === 'too-many')).toHaveLength(1);
    // 'd' sorts first: 10 levels copied, the 11th listed; 40 - 10 files of many/ (and many/ itself) fit.
    expect(report.skipped.find((s) => s.reason === 'too-deep')?.path).toBe(Array(11).fill('d').join('/'));
    expect(report.skippedCount).toBe(1 + (50 - 29) + 1);
  });

  it('extractTarBeneath: the same caps on a container archive, and a deep tree costs no walk per level', async () => {
    const entries: { name: string; type?: string; body?: string }[] = [{ name: 'v/', type: 'directory' }];
    let path = 'v';
    for (let i = 0; i < 300; i++) {
      path += '/d';
      entries.push({ name: `${path}/`, type: 'directory' });
    }
    entries.push({ name: `${path}/deep.txt`, body: 'x' });
    entries.push({ name: 'v/many/', type: 'directory' });
    for (let i = 0; i < 3000; i++) entries.push({ name: `v/many/f${i}` });
    entries.push({ name: 'v/reward.txt', body: '1\n' });
    const dest = join(await temp.make('berth-safefs-tar-'), 'v');
    const report = await extractTarBeneath(Readable.from([await tarOf(entries)]), dest, {
      maxEntries: 1000,
      maxDepth: 64,
    });
    const copied = await countFiles(dest);
    // The copied folder itself is one of the 1000 entries.
    expect(copied.entries).toBe(999);
    expect(copied.depth).toBe(64);
    expect(report).toMatchObject({ files: 1000 - 66, directories: 1 + 64 + 1 });
    expect(report.skipped.filter((s) => s.reason === 'too-deep')).toHaveLength(1);
    expect(report.skipped.filter((s) => s.reason === 'too-many')).toHaveLength(1);
    // 236 levels and the deep file, 3000 - 934 files and reward.txt.
    expect(report.skippedCount).toBe(237 + (3000 - 934) + 1);
    expect(existsSync(join(dest, 'reward.txt'))).toBe(false);
  });

  it('extractTarBeneath stops at its time limit on a stream that never ends, keeping what it copied', async () => {
    const head = await tarOf([
      { name: 'v/', type: 'directory' },
      { name: 'v/a.txt', body: 'a' },
    ]);
    // The archive's first entries, then nothing more (an engine still walking a huge tree).
    const stalled = new Readable({ read() {} });
    stalled.push(head.subarray(0, 1024 + 512));
    const dest = join(await temp.make('berth-safefs-tar-'), 'v');
    const started = Date.now();
    const report = await extractTarBeneath(stalled, dest, { timeoutSec: 0.5 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(report.timedOut).toBe(true);
    expect(report.skipped).toContainEqual(expect.objectContaining({ path: '.', reason: 'timed-out' }));
    expect(await readFile(join(dest, 'a.txt'), 'utf8')).toBe('a');
    expect(stalled.destroyed).toBe(true);
  });

  it('extractTarBeneath stops at its time limit inside a file that does not end (a huge sparse stdout.txt)', async () => {
    // One file of 8 GiB whose zeros come as fast as they are read: past the 1 MiB cap the rest
    // is read and dropped until the time limit. It runs in a child process killed at 60 s: the
    // two ways this has hung (trust16: the parser destroyed without an error; f9e1ba0: dropped
    // chunks drained by promise jobs alone, so the time limit's timer never fired) hang the whole
    // process, which a test's own timeout cannot end. Twelve time limits, as the timer can land
    // anywhere in a write or a drop.
    const script = `import { Readable } from 'node:stream';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extractTarBeneath } from ${JSON.stringify(join(import.meta.dirname, '../../src/util/safe-fs.ts'))};
const header = Buffer.alloc(512);
header.write('v/stdout.txt', 0);
const fields = [[100, '0000644\\0'], [108, '0000000\\0'], [116, '0000000\\0'],
  [124, (8 * 2 ** 30).toString(8).padStart(11, '0') + '\\0'], [136, '00000000000\\0'],
  [148, '        '], [156, '0'], [257, 'ustar\\0'], [263, '00']];
for (const [at, field] of fields) header.write(field, at);
const sum = header.reduce((a, b) => a + b, 0);
header.write(sum.toString(8).padStart(6, '0') + '\\0 ', 148);
const zeros = Buffer.alloc(64 * 1024);
for (let round = 0; round < 12; round++) {
  let sent = false;
  const endless = new Readable({ read() { this.push(sent ? zeros : header); sent = true; } });
  const dest = join(mkdtempSync(join(tmpdir(), 'berth-safefs-tar-')), 'v');
  const started = Date.now();
  const report = await extractTarBeneath(endless, dest, { timeoutSec: 0.1 + round * 0.03, maxBytes: 1024 * 1024 });
  console.log(JSON.stringify({ ms: Date.now() - started, timedOut: report.timedOut, bytes: report.bytes, destroyed: endless.destroyed }));
}
`;
    const tmp = await temp.make('berth-safefs-sparse-');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? signal)));
    clearTimeout(killer);
    const rounds = out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(
        (line) => JSON.parse(line) as { ms: number; timedOut: boolean; bytes: number; destroyed: boolean },
      );
    expect({ code, rounds: rounds.length }).toEqual({ code: 0, rounds: 12 });
    for (const round of rounds) {
      expect(round.ms).toBeLessThan(5_000);
      expect(round).toMatchObject({ timedOut: true, bytes: 1024 * 1024, destroyed: true });
    }
  }, 90_000);
});

describe('copyInBeneath', () => {
  it('writes a trusted folder over planted links without following them', async () => {
    const root = await temp.make('berth-safefs-in-');
    const v = await victims();
    const tests = await temp.make('berth-safefs-tests-');
    await writeFile(join(tests, 'test.sh'), 'echo ok\n');
    await mkdir(join(tests, 'data'));
    await writeFile(join(tests, 'data', 'x.txt'), 'x\n');
    await symlink('test.sh', join(tests, 'alias.sh'));
    // Planted: the folder itself, a file in it, and a folder in it as links.
    await symlink(v.folder, join(root, 'tests'));
    await copyInBeneath(tests, root, 'tests', isRoot ? { uid: 65534, gid: 65534 } : undefined);
    expect(await readFile(join(root, 'tests', 'test.sh'), 'utf8')).toBe('echo ok\n');
    if (isRoot) expect((await lstat(join(root, 'tests', 'data', 'x.txt'))).uid).toBe(65534);
    await v.unchanged();

    const root2 = await temp.make('berth-safefs-in-');
    await mkdir(join(root2, 'tests'));
    await symlink(v.file, join(root2, 'tests', 'test.sh'));
    await symlink(v.folder, join(root2, 'tests', 'data'));
    await copyInBeneath(tests, root2, 'tests');
    expect(await readFile(join(root2, 'tests', 'test.sh'), 'utf8')).toBe('echo ok\n');
    expect(await readFile(join(root2, 'tests', 'data', 'x.txt'), 'utf8')).toBe('x\n');
    await v.unchanged();
  });
});

describe('treeDigestBeneath', () => {
  it('hashes names, kinds, modes, contents and link targets without following a link or opening a fifo', async () => {
    const v = await victims();
    const root = await temp.make('berth-safefs-digest-');
    await mkdir(join(root, 'pkg'));
    await writeFile(join(root, 'pkg', 'a.go'), 'package pkg\n');
    await writeFile(join(root, 'go.mod'), 'module x\n');
    await symlink(v.file, join(root, 'link'));
    await symlink(v.folder, join(root, 'pkg', 'dirlink'));
    spawnSync('mkfifo', [join(root, 'pkg', 'fifo')]);
    await mkdir(join(root, '.git'));
    await writeFile(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const first = await treeDigestBeneath(root, { skipTop: ['.git'] });
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await treeDigestBeneath(root, { skipTop: ['.git'] })).toBe(first);
    // .git is left out; the link's target file is never read (changing it changes nothing).
    await writeFile(join(root, '.git', 'HEAD'), 'ref: refs/heads/other\n');
    await writeFile(join(v.dir, 'secret.txt'), 'changed\n');
    await writeFile(join(v.folder, 'more.txt'), 'more\n');
    expect(await treeDigestBeneath(root, { skipTop: ['.git'] })).toBe(first);
    await writeFile(join(v.dir, 'secret.txt'), 'secret\n');
    await rm(join(v.folder, 'more.txt'));
    await v.unchanged();
    // Each of these changes it: a file's content, its mode, a link's target, a link for a file.
    const changes: Array<() => Promise<unknown>> = [
      () => writeFile(join(root, 'pkg', 'a.go'), 'package pkg // x\n'),
      () => chmod(join(root, 'go.mod'), 0o755),
      () => rm(join(root, 'link')).then(() => symlink('/etc/passwd', join(root, 'link'))),
      () => rm(join(root, 'go.mod')).then(() => symlink(v.file, join(root, 'go.mod'))),
      () => writeFile(join(root, 'pkg', 'b.go'), ''),
    ];
    let previous = first;
    for (const change of changes) {
      await change();
      const now = await treeDigestBeneath(root, { skipTop: ['.git'] });
      expect(now).toMatch(/^[0-9a-f]{64}$/);
      expect(now).not.toBe(previous);
      previous = now;
    }
  });

  it('gives up past its caps', async () => {
    const root = await temp.make('berth-safefs-digest-');
    for (let i = 0; i < 5; i++) await writeFile(join(root, `f${i}`), 'x'.repeat(100));
    expect(await treeDigestBeneath(root)).toMatch(/^[0-9a-f]{64}$/);
    expect(await treeDigestBeneath(root, { maxEntries: 4 })).toBeUndefined();
    expect(await treeDigestBeneath(root, { maxBytes: 499 })).toBeUndefined();
  });
});
