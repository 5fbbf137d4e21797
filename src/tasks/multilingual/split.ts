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
 * when either side is a test file.
 */

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
 * Splits the files of a git diff (as `git diff` writes it, any options) into sections.
 * Text before the first `diff --git` line (a commit message, for instance) is dropped.
 */
export function parseDiffFiles(diff: string): DiffFile[] {
  const files: DiffFile[] = [];
  const lines = diff.split(/(?<=\n)/);
  let current: { header: string; lines: string[] } | undefined;
  const flush = () => {
    if (!current) return;
    const text = current.lines.join('');
    const paths = pathsOf(current.header, current.lines);
    files.push({ ...paths, text });
  };
  for (const line of lines) {
    if (line.startsWith('diff --git ')) {
      flush();
      current = { header: line.replace(/\r?\n$/, ''), lines: [line] };
    } else if (current) {
      current.lines.push(line);
    }
  }
  flush();
  return files;
}

function pathsOf(header: string, lines: string[]): { oldPath: string; newPath: string } {
  let oldPath: string | undefined;
  let newPath: string | undefined;
  for (const line of lines.slice(1)) {
    const text = line.replace(/\r?\n$/, '');
    if (text.startsWith('@@')) break;
    if (text.startsWith('rename from ')) oldPath = unquote(text.slice(12));
    else if (text.startsWith('rename to ')) newPath = unquote(text.slice(10));
    else if (text.startsWith('copy from ')) oldPath = unquote(text.slice(10));
    else if (text.startsWith('copy to ')) newPath = unquote(text.slice(8));
    else if (text.startsWith('--- ') && text !== '--- /dev/null')
      oldPath ??= stripPrefix(unquote(text.slice(4)));
    else if (text.startsWith('+++ ') && text !== '+++ /dev/null')
      newPath ??= stripPrefix(unquote(text.slice(4)));
  }
  if (oldPath === undefined || newPath === undefined) {
    const fromHeader = headerPaths(header.slice('diff --git '.length));
    oldPath ??= fromHeader[0];
    newPath ??= fromHeader[1];
  }
  return { oldPath: oldPath ?? newPath ?? '', newPath: newPath ?? oldPath ?? '' };
}

/** `a/X b/Y` (either side possibly C-quoted). Without quotes and renames, both sides are equal. */
function headerPaths(rest: string): [string, string] {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest, 0);
    const first = unquote(rest.slice(0, end + 1));
    const second = rest.slice(end + 2);
    return [stripPrefix(first), stripPrefix(unquote(second))];
  }
  if (rest.endsWith('"')) {
    const start = rest.lastIndexOf(' "');
    return [stripPrefix(rest.slice(0, start)), stripPrefix(unquote(rest.slice(start + 1)))];
  }
  // `a/P b/P`: both halves have the same length when the path did not change.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest.slice(2, half) === rest.slice(half + 3)) {
    const path = rest.slice(2, half);
    return [path, path];
  }
  const at = rest.indexOf(' b/');
  return [stripPrefix(rest.slice(0, at)), stripPrefix(rest.slice(at + 1))];
}

function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}

function stripPrefix(path: string): string {
  return /^[abciwo]\//.test(path) ? path.slice(2) : path;
}

/** Undoes git's C-style quoting of paths with special characters (octal escapes are UTF-8 bytes). */
function unquote(text: string): string {
  const value = text.replace(/\t.*$/, '');
  if (!value.startsWith('"') || !value.endsWith('"')) return value;
  const bytes: number[] = [];
  const body = value.slice(1, -1);
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, '\\': 92, a: 7, b: 8, f: 12, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '\\') {
      const next = body[i + 1] as string;
      if (/[0-7]/.test(next)) {
        bytes.push(Number.parseInt(body.slice(i + 1, i + 4), 8));
        i += 3;
      } else {
        bytes.push(simple[next] ?? next.charCodeAt(0));
        i += 1;
      }
    } else {
      for (const byte of Buffer.from(ch, 'utf8')) bytes.push(byte);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Splits an agent's diff by the rule above. `testPatchPaths` are the files the task's test
 * patch touches; changes to them are test changes whatever their names.
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

/** Every path a diff touches (both sides of renames). */
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
