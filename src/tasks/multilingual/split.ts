/**
 * The multilingual demo's patch separation (seed `multilingual-swe-demo.md`,
 * step 3): the agent's diff is split into code changes and test changes; the
 * test changes are discarded before the task's test patch is applied, so an
 * agent cannot weaken or replace the hidden tests.
 *
 * ## The rule (documented in docs/multilingual-tasks.md)
 * A changed file is a **test file** when any of these holds, whatever the
 * task's language (a repository often mixes languages):
 * 1. a directory in its path is named `test`, `tests`, `testing`, `__tests__`,
 *    `__mocks__`, `__snapshots__`, `spec`, `specs`, `testdata` or `e2e`
 *    (case-insensitive, so Swift's `Tests/` and Maven's `src/test/` count);
 * 2. its file name matches a test-file pattern of a language:
 *    Python `test_*.py`, `*_test.py`, `conftest.py`; Go `*_test.go`;
 *    JavaScript/TypeScript `*.test.*` and `*.spec.*` (js, jsx, mjs, cjs, ts,
 *    tsx, mts, cts); Java/Kotlin/Scala/Groovy/PHP/C#/Swift `*Test.*`,
 *    `*Tests.*`, `*IT.*`, `*Spec.*` (java, kt, kts, scala, groovy, php, cs,
 *    swift); Ruby `*_spec.rb`, `*_test.rb`, `test_*.rb`; C/C++ `test_*.c*`,
 *    `*_test.c*`, `*_unittest.c*` (c, cc, cpp, cxx); Rust `tests.rs`;
 * 3. the task's test patch touches it (the SWE-bench rule: those files are
 *    reset to the base before the test patch is applied).
 * Everything else is a code change and is kept. A rename is a test change
 * when either side is a test file. Test-runner settings and plugin files among the code
 * changes (`pytest.ini`, `addopts` in `pyproject.toml`...) are no code changes either: the
 * verifier fails closed on them (verify.ts, the tamper checks' patch layer).
 */

import { parseDiff, sectionText } from '../../util/patch-files.ts';

const TEST_DIRS = new Set([
  'test',
  'tests',
  'testing',
  '__tests__',
  '__mocks__',
  '__snapshots__',
  'spec',
  'specs',
  'testdata',
  'e2e',
]);

const TEST_FILE_PATTERNS: Array<{ language: string; pattern: RegExp }> = [
  { language: 'python', pattern: /^(test_.*\.py|.*_test\.py|conftest\.py)$/ },
  { language: 'go', pattern: /_test\.go$/ },
  { language: 'javascript/typescript', pattern: /\.(test|spec)\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$/ },
  {
    language: 'java/kotlin/scala/groovy/php/csharp/swift',
    pattern: /(Test|Tests|IT|Spec)\.(java|kt|kts|scala|groovy|php|cs|swift)$/,
  },
  { language: 'ruby', pattern: /^(.*_spec\.rb|.*_test\.rb|test_.*\.rb)$/ },
  { language: 'c/c++', pattern: /^(test_.*|.*_test|.*_unittest)\.(c|cc|cpp|cxx)$/ },
  { language: 'rust', pattern: /^tests\.rs$/ },
];

/** Why `path` is a test file (`dir:tests`, `name:go`), or undefined for a code file. */
export function testFileReason(path: string): string | undefined {
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  const name = parts.at(-1) ?? '';
  for (const dir of parts.slice(0, -1)) if (TEST_DIRS.has(dir.toLowerCase())) return `dir:${dir}`;
  for (const { language, pattern } of TEST_FILE_PATTERNS) if (pattern.test(name)) return `name:${language}`;
  return undefined;
}

/** True when `path` is a test file by the rule above (without the test-patch clause). */
export function isTestPath(path: string): boolean {
  return testFileReason(path) !== undefined;
}

/** One file's section of a unified git diff. */
export interface DiffFile {
  /** Path before the change (`/dev/null` side omitted: equal to `newPath` for an added file). */
  oldPath: string;
  newPath: string;
  /** The section's text, from its `diff --git` line up to the next one. */
  text: string;
}

export interface DiffSplit {
  /** Sections kept: code changes, in their original order. */
  code: DiffFile[];
  /** Sections discarded: test changes, with the reason. */
  test: Array<DiffFile & { reason: string }>;
  /** The code changes as one diff (what is applied). */
  codeDiff: string;
  /** The test changes as one diff (kept in the trial folder, never applied). */
  testDiff: string;
}

/**
 * Splits the files of a git diff (as `git diff` writes it, any options) into sections, with
 * berth's one diff parser (src/util/patch-files.ts). Text before the first `diff --git` line
 * (a commit message, for instance) is dropped.
 * @throws UndecodablePathError when a path is not UTF-8 text (src/util/patch-files.ts).
 */
export function parseDiffFiles(diff: string): DiffFile[] {
  return parseDiff(diff).map((section) => ({
    oldPath: section.oldPath ?? section.newPath ?? '',
    newPath: section.newPath ?? section.oldPath ?? '',
    text: sectionText(section),
  }));
}

/**
 * Splits an agent's diff by the rule above. `testPatchPaths` are the files the task's test
 * patch touches; changes to them are test changes whatever their names.
 * @throws UndecodablePathError when a path is not UTF-8 text.
 */
export function splitDiff(diff: string, testPatchPaths: Iterable<string> = []): DiffSplit {
  const patched = new Set(testPatchPaths);
  const code: DiffFile[] = [];
  const test: Array<DiffFile & { reason: string }> = [];
  for (const file of parseDiffFiles(diff)) {
    const reason =
      testFileReason(file.newPath) ??
      testFileReason(file.oldPath) ??
      (patched.has(file.newPath) || patched.has(file.oldPath) ? 'touched-by-test-patch' : undefined);
    if (reason) test.push({ ...file, reason });
    else code.push(file);
  }
  return {
    code,
    test,
    codeDiff: code.map((file) => file.text).join(''),
    testDiff: test.map((file) => file.text).join(''),
  };
}

/** Every path a diff touches (both sides of renames). @throws UndecodablePathError when a path is not UTF-8 text. */
export function diffPaths(diff: string): string[] {
  const paths = new Set<string>();
  for (const file of parseDiffFiles(diff)) {
    paths.add(file.oldPath);
    paths.add(file.newPath);
  }
  return [...paths].filter((path) => path !== '');
}

/**
 * The same rule as `testFileReason` as two POSIX extended regular expressions, for
 * shell scripts (the tasks' Harbor-compatible `tests/test.sh`): a path is a test file when
 * it matches `dirs` case-insensitively or `names` case-sensitively.
 */
export const TEST_PATH_ERE = {
  dirs: `(^|/)(${[...TEST_DIRS].join('|')})/`,
  names:
    '(^|/)(test_[^/]*\\.py|[^/]*_test\\.py|conftest\\.py|[^/]*_test\\.go|[^/]*\\.(test|spec)\\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)' +
    '|[^/]*(Test|Tests|IT|Spec)\\.(java|kt|kts|scala|groovy|php|cs|swift)|[^/]*_spec\\.rb|[^/]*_test\\.rb|test_[^/]*\\.rb' +
    '|(test_[^/]*|[^/]*_test|[^/]*_unittest)\\.(c|cc|cpp|cxx)|tests\\.rs)$',
};
