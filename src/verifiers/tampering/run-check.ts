/**
 * What the tests changed in the work folder while they ran: the test patch's files and the
 * test runner's configuration, plugin and start-up files must read the same after the run as
 * before it (code that rewrites a test file or writes a conftest.py while pytest collects can
 * change what later runs). A shell snippet prints `sha256  path` lines for those files, each
 * regular file's inode and status change time before it; berth runs it right after applying the
 * test patch and again after the tests, and compares. The status change time is what catches a
 * file rewritten before the runner read it and put back byte for byte afterwards: no process
 * without CAP_SYS_TIME can set it back.
 */
import { shellQuote } from '../../util/shell.ts';
import type { TamperFinding } from './types.ts';

/** Runner files looked for anywhere in the repository (git pathspecs; node_modules left out). */
export const RUNNER_GLOBS = [
  '**/conftest.py',
  '**/pytest.ini',
  '**/.pytest.ini',
  '**/pytest.toml',
  '**/.pytest.toml',
  '**/setup.cfg',
  '**/tox.ini',
  '**/pyproject.toml',
  '**/sitecustomize.py',
  '**/usercustomize.py',
  '**/*.pth',
  '**/pytest.py',
  '**/*.egg-info/entry_points.txt',
  '**/*.dist-info/entry_points.txt',
  '**/jest.config.*',
  '**/vitest.config.*',
  '**/.mocharc*',
  '**/.npmrc',
];

/**
 * A distribution's entry points in the repository (`*.egg-info/`, `*.dist-info/`): a runner file
 * only for the `pytest11` plugins it may declare, which pytest loads by itself.
 */
const ENTRY_POINTS = /(^|\/)[^/]+\.(egg|dist)-info\/entry_points\.txt$/;

/** Whether an entry points file's text declares pytest plugins (a `[pytest11]` group). */
export function declaresPytestPlugin(text: string): boolean {
  return /^[ \t]*\[[ \t]*pytest11[ \t]*\]/m.test(text);
}

/** Whether `path` is a distribution's entry points file (see `ENTRY_POINTS`). */
export function isEntryPoints(path: string): boolean {
  return ENTRY_POINTS.test(path);
}

/** Added to an entry points file's fingerprint value when it declares pytest plugins. */
export const PLUGIN_MARK = '+pytest11';

/**
 * Shell lines printing `sha256  path` for the test patch's files and every runner file git sees
 * (tracked or untracked, ignored ones too): a regular file's content hash, a link's target's (the link
 * is never followed). A regular file's line comes after an `s:<inode>_<status change time>` line
 * (where `stat` answers). Never fails (prints nothing where a tool is missing).
 */
export function fingerprintScript(testFiles: readonly string[]): string {
  const listed = testFiles.length > 0 ? `printf '%s\\0' ${testFiles.map(shellQuote).join(' ')}; ` : '';
  return `{ { ${listed}${RUNNER_LISTING}; ${RUNNER_FIND}; } 2>/dev/null | sort -zu | xargs -0 -r sh -c ${HASH} sh 2>/dev/null; } || true`;
}

/**
 * The runner files on disk, found by name without git (GNU find, NUL-separated, `.git` and
 * `node_modules` folders not entered, links listed, never followed): in a container the tests run
 * as root and own the repository's `.git`, so what git lists after them (its index, its
 * configuration's `core.worktree`) is theirs to choose; a file on disk is not hidden by that.
 * Prints nothing where find has no `-printf` (BusyBox): git's list alone then.
 */
const RUNNER_FIND = `find . \\( -name .git -o -name node_modules \\) -prune -o ! -type d \\( ${RUNNER_GLOBS.map(
  (g) => {
    const rest = g.replace(/^\*\*\//, '');
    return rest.includes('/') ? `-path ${shellQuote(`*/${rest}`)}` : `-name ${shellQuote(rest)}`;
  },
).join(' -o ')} \\) -printf '%P\\0'`;

/**
 * git's list of the runner files it sees, NUL-separated: tracked or untracked, ignored ones too
 * (no `--exclude-standard`): pytest reads a conftest.py whatever a `.gitignore` or
 * `.git/info/exclude` says, and the run can write both (breaker7:
 * `pytest-ignored-conftest-created-during-run`, `pytest-conftest-created-git-excluded`).
 */
const RUNNER_LISTING = `git --git-dir=.git --work-tree=. -c core.quotePath=false -c core.fsmonitor=false ls-files -z -co -- ${[
  ...RUNNER_GLOBS.map((g) => shellQuote(`:(glob)${g}`)),
  shellQuote(':(exclude,glob)**/node_modules/**'),
].join(' ')}`;

/**
 * Shell lines printing git's list of the runner files (`RUNNER_GLOBS`, tracked or untracked,
 * ignored ones too), each path followed by a NUL; nothing where git fails. For berth to fingerprint
 * itself (host-fingerprint.ts).
 */
export function runnerListingScript(): string {
  return `{ ${RUNNER_LISTING}; } 2>/dev/null || true`;
}

/** The same lines for the files named (absolute paths, e.g. berth's probe code in a container). */
export function fingerprintFilesScript(paths: readonly string[]): string {
  if (paths.length === 0) return '';
  return `{ printf '%s\\0' ${paths.map(shellQuote).join(' ')} | xargs -0 -r sh -c ${HASH} sh 2>/dev/null; } || true`;
}

// Regular files by content; a link by its target (never followed: a link to a fifo or to a file
// outside the repository must neither hang nor be read); anything else (a fifo) as `other`.
// A regular file costs two processes: its `s:` line (stat), then its sha256sum line (an empty
// line instead when it cannot be read, so the `s:` line never goes with another file's).
// An entry points file that declares pytest plugins gets a `p:pytest11` line before its own (also
// where grep cannot tell: only its "no match" exit leaves the line out).
const HASH = shellQuote(
  'for f do if [ -L "$f" ]; then printf "%s  %s\\n" "$(printf "link:%s" "$(readlink "$f")" | sha256sum | cut -c1-64)" "$f"; elif [ -f "$f" ]; then case "$f" in *.egg-info/entry_points.txt|*.dist-info/entry_points.txt) grep -qsE "^[[:blank:]]*\\[[[:blank:]]*pytest11[[:blank:]]*\\]" -- "$f"; [ $? -eq 1 ] || echo p:pytest11;; esac; stat -c "s:%i_%z" -- "$f" 2>/dev/null; sha256sum -- "$f" 2>/dev/null || echo; elif [ -e "$f" ]; then printf "%s  %s\\n" "$(printf "other" | sha256sum | cut -c1-64)" "$f"; fi; done',
);

/**
 * `sha256  path` lines, each regular file's preceded by its `s:<inode>_<status change time>`
 * line -> path -> `hash` or `hash status` (the status's spaces as `_`; sha256sum's `\` escaping
 * of odd names kept as printed), plus ` +pytest11` after a `p:pytest11` line. An `s:` line
 * belongs to the line right after it only, a `p:` line to the file line after its `s:` line.
 */
export function parseFingerprints(text: string): Map<string, string> {
  const map = new Map<string, string>();
  let status: string | undefined;
  let plugin = false;
  for (const line of text.split('\n')) {
    const m = line.match(/^\\?([0-9a-f]{64}) [ *](.+)$/);
    if (m) {
      const value = status ? `${m[1]} ${status}` : (m[1] as string);
      map.set(m[2] as string, plugin ? `${value} ${PLUGIN_MARK}` : value);
    }
    const s = m ? undefined : /^s:(\S.*)$/.exec(line);
    status = s ? (s[1] as string).replaceAll(' ', '_') : undefined;
    plugin = line === 'p:pytest11' || (plugin && s !== undefined && s !== null);
  }
  return map;
}

/**
 * A finding when the run changed, created or removed any fingerprinted file, or when a
 * fingerprint names a file whose name is not UTF-8 text (or holds U+FFFD, what a lossy reading
 * leaves of such bytes, as in berth's one diff parser src/util/patch-files.ts). The shell prints
 * names as bytes and berth reads its output as UTF-8: `d\376/conftest.py` and `d\377/conftest.py`
 * both read `d\uFFFD/conftest.py`, the second's line overwrites the first's, and a run that
 * rewrote the first changed nothing berth could see (trust12). Such files cannot be checked, so
 * they refuse a pass (`undecodable-name`) whether or not they seem changed.
 */
export function compareFingerprints(
  before: Map<string, string>,
  after: Map<string, string>,
): TamperFinding | undefined {
  const changed: string[] = [];
  // Same content, another inode or status change time: written during the run and put back.
  const restored: string[] = [];
  for (const [path, value] of after) {
    const old = before.get(path);
    if (old === value) continue;
    // An entry points file the run wrote that declares no pytest plugin can load nothing into a
    // later pytest: `pip install -e .` regenerates the package's (console scripts) while the tests
    // run, an honest patch's too (test/trials/pip-editable.test.ts). One written with a plugin and
    // put back without it is no more than one made and deleted, which no fingerprint sees.
    // Regular files only (a value with a status): a link is followed by pytest's reader.
    if (isEntryPoints(path) && value.split(' ').length >= 2 && !value.endsWith(PLUGIN_MARK)) continue;
    if (old !== undefined && old.split(' ')[0] === value.split(' ')[0]) restored.push(path);
    changed.push(path);
  }
  for (const path of before.keys()) if (!after.has(path)) changed.push(path);
  const unnamed = [...new Set([...before.keys(), ...after.keys()])].filter((path) => path.includes('\uFFFD'));
  if (changed.length === 0 && unnamed.length === 0) return undefined;
  changed.sort();
  unnamed.sort();
  const some = (paths: string[]) =>
    `${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ` and ${paths.length - 5} more` : ''}`;
  const undecodable = `test or test-runner files whose names are not UTF-8 text: ${some(unnamed)} (berth cannot tell such names apart, so it cannot check what the run did to them)`;
  if (changed.length === 0)
    return { kind: 'undecodable-name', layer: 'run', veto: true, message: undecodable, paths: unnamed };
  return {
    kind: 'changed-during-run',
    layer: 'run',
    veto: true,
    message: `the test run changed test or test-runner files: ${some(changed)}${restored.length > 0 ? ` (${some(restored.sort())}: written and put back with the same content)` : ''}${unnamed.length > 0 ? `; ${undecodable}` : ''}`,
    paths: [...new Set([...changed, ...unnamed])].sort(),
  };
}
