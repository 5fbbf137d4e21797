import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  countHunks,
  isTestPath,
  resultingPaths,
  splitPatch,
  touchedPaths,
  withoutLastHunk,
} from './patches.ts';

const rows = readFileSync(new URL('../../examples/swe-dockerless.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { instance_id: string; patch: string; test_patch: string });

const twoFiles = `diff --git a/a.py b/a.py
index 1111111..2222222 100644
--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
@@ -10,2 +10,3 @@ def f():
 ten
+ten and a half
 eleven
diff --git a/new.py b/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+--- not a header
++++ not a header either
`;

describe('splitPatch', () => {
  it('splits files and hunks and keeps content lines that look like headers', () => {
    const sections = splitPatch(twoFiles);
    expect(sections.map((s) => [s.oldPath, s.newPath, s.hunks.length])).toEqual([
      ['a.py', 'a.py', 2],
      [undefined, 'new.py', 1],
    ]);
    expect(sections[1]?.hunks[0]).toContain('+--- not a header\n++++ not a header either\n');
    expect(sections.map((s) => s.header + s.hunks.join('')).join('')).toBe(twoFiles);
  });

  it('reads plain (non-git) unified diffs', () => {
    const plain =
      '--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/y.txt\n+++ b/y.txt\n@@ -1 +1 @@\n-c\n+d\n';
    expect(splitPatch(plain).map((s) => s.newPath)).toEqual(['x.txt', 'y.txt']);
  });

  it('agrees with jsdiff on the number of hunks of every example gold and test patch', () => {
    for (const row of rows) {
      for (const patch of [row.patch, row.test_patch]) {
        const ours = splitPatch(patch).reduce((sum, s) => sum + s.hunks.length, 0);
        expect(ours, row.instance_id).toBe(countHunks(patch));
      }
    }
  });
});

describe('withoutLastHunk', () => {
  it('drops the last hunk, and a new file with it entirely', () => {
    const partial = withoutLastHunk(twoFiles) as string;
    expect(partial).not.toContain('new.py');
    expect(countHunks(partial)).toBe(2);
    const again = withoutLastHunk(partial) as string;
    expect(countHunks(again)).toBe(1);
    expect(again).toContain('+TWO');
    expect(again).not.toContain('ten and a half');
  });

  it('gives undefined for a single-hunk patch', () => {
    const one = withoutLastHunk(withoutLastHunk(twoFiles) as string) as string;
    expect(withoutLastHunk(one)).toBeUndefined();
  });

  it('leaves a prefix of every example gold patch', () => {
    for (const row of rows) {
      const partial = withoutLastHunk(row.patch);
      expect(partial, row.instance_id).toBeDefined();
      expect(countHunks(partial as string)).toBe(countHunks(row.patch) - 1);
    }
  });
});

describe('paths', () => {
  it('lists touched and resulting paths', () => {
    expect(touchedPaths(twoFiles)).toEqual(['a.py', 'new.py']);
    const deletion =
      'diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n';
    expect(touchedPaths(deletion)).toEqual(['gone.py']);
    expect(resultingPaths(deletion)).toEqual([]);
  });

  it('recognises test files of several languages and nothing else', () => {
    for (const path of [
      'tests/test_x.py',
      'pkg/test_y.py',
      'a/b_test.go',
      'test/x.test.js',
      'src/__tests__/a.ts',
      'x.spec.mts',
      'conftest.py',
      'src/test/java/FooTest.java',
      'spec/a_spec.rb',
    ]) {
      expect(isTestPath(path), path).toBe(true);
    }
    for (const path of [
      'src/semver/version.py',
      'lib/csvline.js',
      'contest.py',
      'testing_utils.py',
      'README.md',
      'src/latest.py',
    ]) {
      expect(isTestPath(path), path).toBe(false);
    }
  });
});
