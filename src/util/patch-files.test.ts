import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { patchFiles, placedText, touchedPaths, UndecodablePathError, unquoteGitPath } from './patch-files.ts';

describe('patchFiles', () => {
  it('lists modified, created, deleted and renamed files of a git diff', () => {
    const patch = [
      'diff --git a/src/x.py b/src/x.py',
      'index 1..2 100644',
      '--- a/src/x.py',
      '+++ b/src/x.py',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      'diff --git a/tests/new_test.py b/tests/new_test.py',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/tests/new_test.py',
      '@@ -0,0 +1 @@',
      '+x',
      'diff --git a/old.txt b/old.txt',
      'deleted file mode 100644',
      '--- a/old.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-x',
      'diff --git a/a b.txt b/c d.txt',
      'similarity index 100%',
      'rename from a b.txt',
      'rename to c d.txt',
      'diff --git "a/sp\\303\\251cial" "b/sp\\303\\251cial"',
      '--- "a/sp\\303\\251cial"',
      '+++ "b/sp\\303\\251cial"',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      '',
    ].join('\n');
    expect(patchFiles(patch)).toEqual([
      { oldPath: 'src/x.py', newPath: 'src/x.py', created: false, deleted: false },
      { oldPath: undefined, newPath: 'tests/new_test.py', created: true, deleted: false },
      { oldPath: 'old.txt', newPath: undefined, created: false, deleted: true },
      { oldPath: 'a b.txt', newPath: 'c d.txt', created: false, deleted: false },
      { oldPath: 'spécial', newPath: 'spécial', created: false, deleted: false },
    ]);
  });

  it('reads plain unified diffs without git headers', () => {
    const patch = '--- a/lib/m.js\t2020-01-01\n+++ b/lib/m.js\t2020-01-02\n@@ -1 +1 @@\n-a\n+b\n';
    expect(touchedPaths(patch)).toEqual(['lib/m.js']);
  });

  it('does not mistake hunk lines that start with --- for headers', () => {
    const patch = 'diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n---- x\n+--- y\n';
    expect(touchedPaths(patch)).toEqual(['f']);
  });

  it('reads the fixture test patches', () => {
    const rows = readFileSync(new URL('../../test/fixtures/swebench/mini.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { test_patch: string; patch: string });
    expect(touchedPaths(rows[0]?.test_patch ?? '')).toEqual(['tests/test_stats.py']);
    expect(touchedPaths(rows[1]?.patch ?? '')).toEqual(['lib/range.js']);
  });

  it('unquotes git paths', () => {
    expect(unquoteGitPath('"a\\tb\\"c"')).toBe('a\tb"c');
    expect(unquoteGitPath('plain')).toBe('plain');
  });

  it('unquotes a path with a character outside the BMP whole', () => {
    expect(unquoteGitPath('"a\\tb\u{1F600}"')).toBe('a\tb\u{1F600}');
    expect(unquoteGitPath('"sp\\303\\251cial"')).toBe('sp\u00E9cial');
  });

  it('refuses a path git wrote whose bytes are not UTF-8 (a lossy reading names another file)', () => {
    // A real git diff of a file named `zz<0xFF>_test.go`.
    const repo = mkdtempSync(join(tmpdir(), 'berth-patch-files-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', ['-C', repo, '-c', 'core.quotePath=true', ...args], { encoding: 'utf8' });
      git('init', '-q');
      writeFileSync(
        Buffer.concat([Buffer.from(`${repo}/zz`), Buffer.from([0xff]), Buffer.from('_test.go')]),
        'package p\n',
      );
      git('add', '-A');
      const diff = git('diff', '--cached', '--binary', '--no-color');
      expect(diff).toContain('"b/zz\\377_test.go"');
      expect(() => patchFiles(diff)).toThrow(UndecodablePathError);
      expect(() => touchedPaths(diff)).toThrow(/not UTF-8/);
      // The same path without quoting, read lossily: a U+FFFD where the byte was.
      const lossy = execFileSync('git', ['-C', repo, '-c', 'core.quotePath=false', 'diff', '--cached'], {
        encoding: 'utf8',
      });
      expect(lossy).toContain('zz\uFFFD_test.go');
      expect(() => patchFiles(lossy)).toThrow(UndecodablePathError);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
    expect(() => unquoteGitPath('"a\\000b"')).toThrow(UndecodablePathError);
    expect(() => unquoteGitPath('"\\355\\240\\200"')).toThrow(UndecodablePathError); // a UTF-16 surrogate
  });
});

describe('the -p1 rule and the text an apply tool gets (breaker10 F3, F4)', () => {
  const hunk = ['@@ -1,2 +1,3 @@', ' a', '+b', ' c'];

  it('removes any first path component, as git apply and patch -p1 do', () => {
    const patch = [
      'diff --git z/pkg/mod.py z/pkg/mod.py',
      '--- z/pkg/mod.py',
      '+++ z/pkg/mod.py',
      ...hunk,
      '--- src/logging.py',
      '+++ dst/logging.py',
      ...hunk,
      '',
    ].join('\n');
    expect(touchedPaths(patch)).toEqual(['pkg/mod.py', 'logging.py']);
  });

  it('applies what the parser placed: a context-diff section after the last hunk is left out', () => {
    const unified = ['--- a/pkg/mod.py', '+++ b/pkg/mod.py', ...hunk, '\\ No newline at end of file'];
    const context = [
      '*** /dev/null',
      '--- b/conftest.py',
      '***************',
      '*** 0 ****',
      '--- 1,2 ----',
      '+ def x():',
      '+     pass',
    ];
    const patch = [...unified, ...context, ''].join('\n');
    const placed = placedText(patch);
    expect(placed.text).toBe([...unified, ''].join('\n'));
    expect(placed.droppedLines).toBe(context.length);
    expect(touchedPaths(placed.text)).toEqual(['pkg/mod.py']);
    expect(placed.paths).toEqual(['pkg/mod.py']);
    // A diff that is only a context diff places nothing.
    expect(placedText([...context, ''].join('\n')).text).toBe('');
  });

  it("keeps git's extended headers and binary patches; drops other lines among them", () => {
    const binary = [
      'diff --git a/img.png b/img.png',
      'new file mode 100644',
      'index 0000000..d00491f',
      'GIT binary patch',
      'literal 4',
      'LcmZQzWMT#Y01f~L',
      '',
      'literal 0',
      'HcmV?d00001',
      '',
    ];
    const modeOnly = ['diff --git a/run.sh b/run.sh', 'old mode 100644', 'new mode 100755'];
    const smuggled = ['*** /dev/null', '--- b/conftest.py', '+ pass'];
    const patch = [...binary, ...modeOnly, ...smuggled, ''].join('\n');
    const placed = placedText(patch);
    expect(placed.text).toBe([...binary, ...modeOnly, ''].join('\n'));
    expect(placed.droppedLines).toBe(smuggled.length);
  });

  it('leaves a git diff as it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-placed-'));
    try {
      execFileSync('git', ['init', '-q', dir]);
      writeFileSync(join(dir, 'x.txt'), 'a\nb\n');
      execFileSync('git', ['-C', dir, 'add', '.']);
      writeFileSync(join(dir, 'x.txt'), 'a\nc\nd');
      writeFileSync(join(dir, 'y.txt'), 'new\n');
      execFileSync('git', ['-C', dir, 'add', '-N', 'y.txt']);
      const diff = execFileSync('git', ['-C', dir, 'diff'], { encoding: 'utf8' });
      expect(diff).toContain('\\ No newline at end of file');
      expect(placedText(diff)).toEqual({ text: diff, droppedLines: 0, paths: ['x.txt', 'y.txt'] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
