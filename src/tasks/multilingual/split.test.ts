import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UndecodablePathError } from '../../util/patch-files.ts';
import { diffPaths, isTestPath, parseDiffFiles, splitDiff, TEST_PATH_ERE, testFileReason } from './split.ts';

const table: Array<[string, boolean]> = [
  ['src/app.py', false],
  ['tests/test_app.py', true],
  ['pkg/test_util.py', true],
  ['pkg/util_test.py', true],
  ['conftest.py', true],
  ['pkg/contest.py', false],
  ['wrap.go', false],
  ['wrap_test.go', true],
  ['internal/testing.go', false],
  ['src/compare.js', false],
  ['src/compare.test.js', true],
  ['src/compare.spec.ts', true],
  ['src/__tests__/compare.js', true],
  ['src/latest.js', false],
  ['src/main/kotlin/Foo.kt', false],
  ['src/test/kotlin/FooTest.kt', true],
  ['lib/FooTest.kt', true],
  ['lib/Contest.kt', false],
  ['app/src/main/java/BarIT.java', true],
  ['Tests/AppTests/AppTests.swift', true],
  ['spec/models/user_spec.rb', true],
  ['lib/user_spec.rb', true],
  ['lib/attestation.rb', false],
  ['src/parser_unittest.cc', true],
  ['src/test_main.c', true],
  ['src/latest.c', false],
  ['php/src/UserTest.php', true],
  ['testdata/input.json', true],
  ['docs/testing-guide.md', false],
  ['README.md', false],
];

describe('test file rule', () => {
  it.each(table)('%s -> %s', (path, expected) => {
    expect(isTestPath(path)).toBe(expected);
  });

  it('the shell form used by test.sh agrees on every path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-split-'));
    try {
      const file = join(dir, 'paths.txt');
      writeFileSync(file, `${table.map(([path]) => path).join('\n')}\n`);
      const grep = (flags: string[], pattern: string) => {
        try {
          return execFileSync('grep', [...flags, pattern, file], { encoding: 'utf8' })
            .split('\n')
            .filter(Boolean);
        } catch {
          return [];
        }
      };
      const matched = new Set([...grep(['-iE'], TEST_PATH_ERE.dirs), ...grep(['-E'], TEST_PATH_ERE.names)]);
      for (const [path, expected] of table) expect(matched.has(path), path).toBe(expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names why', () => {
    expect(testFileReason('a/tests/x.py')).toBe('dir:tests');
    expect(testFileReason('x_test.go')).toBe('name:go');
  });
});

function gitDiff(setup: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-split-git-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  try {
    git('init', '-q');
    writeFileSync(join(dir, 'keep.py'), 'a = 1\n');
    writeFileSync(join(dir, 'test_keep.py'), 'def test_a():\n    assert True\n');
    writeFileSync(join(dir, 'old name.py'), 'x = 1\n');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
    setup(dir);
    git('add', '-A');
    return git('diff', '--cached', '--binary', '--no-renames', 'HEAD');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('splitDiff on real git diffs', () => {
  it('keeps code, discards tests, and counts files the test patch touches as tests', () => {
    const diff = gitDiff((dir) => {
      writeFileSync(join(dir, 'keep.py'), 'a = 2\n');
      writeFileSync(join(dir, 'test_keep.py'), 'def test_a():\n    pass\n');
      writeFileSync(join(dir, 'old name.py'), 'x = 2\n');
      writeFileSync(join(dir, 'new_test.go'), 'package x\n');
      writeFileSync(join(dir, 'blob.bin'), Buffer.from([0, 1, 2, 3, 255]));
      writeFileSync(join(dir, 'caf\u00e9.py'), 'c = 1\n');
    });
    expect(parseDiffFiles(diff).map((f) => f.newPath)).toEqual([
      'blob.bin',
      'café.py',
      'keep.py',
      'new_test.go',
      'old name.py',
      'test_keep.py',
    ]);
    const split = splitDiff(diff, ['keep.py']);
    expect(split.code.map((f) => f.newPath)).toEqual(['blob.bin', 'café.py', 'old name.py']);
    expect(split.test.map((f) => [f.newPath, f.reason])).toEqual([
      ['keep.py', 'touched-by-test-patch'],
      ['new_test.go', 'name:go'],
      ['test_keep.py', 'name:python'],
    ]);
    expect(split.codeDiff + split.testDiff).toHaveLength(diff.length);
    expect(split.codeDiff).toContain('GIT binary patch');
  });

  it('handles deleted files: a deleted test file is a test change, a deleted code file is kept', () => {
    const diff = gitDiff((dir) => {
      rmSync(join(dir, 'test_keep.py'));
      rmSync(join(dir, 'old name.py'));
    });
    const split = splitDiff(diff);
    expect(split.test.map((f) => f.oldPath)).toEqual(['test_keep.py']);
    expect(split.code.map((f) => f.oldPath)).toEqual(['old name.py']);
  });

  it('refuses a test file whose name is not UTF-8 (a lossy name would be listed as discarded, the real file kept)', () => {
    const diff = gitDiff((dir) => {
      writeFileSync(
        Buffer.concat([Buffer.from(join(dir, 'zz')), Buffer.from([0xff]), Buffer.from('_test.go')]),
        'package x\n',
      );
    });
    expect(diff).toContain('"b/zz\\377_test.go"');
    expect(() => splitDiff(diff)).toThrow(UndecodablePathError);
  });

  it('reads rename headers', () => {
    const diff = [
      'diff --git a/src/old.js b/test/new.js',
      'similarity index 100%',
      'rename from src/old.js',
      'rename to test/new.js',
      '',
    ].join('\n');
    const [file] = parseDiffFiles(diff);
    expect(file).toMatchObject({ oldPath: 'src/old.js', newPath: 'test/new.js' });
    expect(splitDiff(diff).test).toHaveLength(1);
    expect(diffPaths(diff)).toEqual(['src/old.js', 'test/new.js']);
  });
});
