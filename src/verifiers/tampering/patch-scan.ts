/**
 * Layer (b): files in the submitted patch that decide how the tests are collected, run and
 * reported rather than what the code does. A fix never needs them, and each one lets the code
 * under test report its own tests as passing:
 *
 * - pytest plugins: any `conftest.py`; distribution metadata in the repository (`*.egg-info/`,
 *   `*.dist-info/`, whose `entry_points.txt` can declare a `pytest11` plugin that pytest loads by
 *   itself, since `python -m pytest` puts the working folder on `sys.path`); a `pytest11` entry
 *   point in `setup.py`;
 * - pytest configuration: `pytest.ini`, `.pytest.ini`, `pytest.toml`, `.pytest.toml` (pytest 9 reads
 *   them first), and the pytest sections of `setup.cfg`
 *   (`[tool:pytest]`), `tox.ini` (`[pytest]`) and `pyproject.toml` (`[tool.pytest.ini_options]`,
 *   `[tool.pytest]`), plus entry-point sections naming `pytest11` (`addopts = -p ...`,
 *   `python_files`, `testpaths`... all change what runs); changes to the keys `markers`,
 *   `filterwarnings` and `minversion` are allowed (fixes add markers and warning filters);
 * - modules that shadow the runner or run at interpreter start-up, when the patch creates them:
 *   `pytest.py`, `py.py`, `pluggy.py`, anything under a `_pytest/`, `pytest/` or `pluggy/`
 *   folder, `sitecustomize.py`, `usercustomize.py`, `*.pth`, compiled `*.pyc` files (a
 *   sourceless `pytest.pyc` is importable), and a module at the top of the repository named like
 *   a standard-library module (`logging.py`, `subprocess/__init__.py`: `python -m pytest` puts
 *   the working folder first on `sys.path`, and pytest imports them before berth's probe loads),
 *   or named like a module the environment's python imports from outside the repository
 *   (`iniconfig.py`, `packaging/__init__.py`: pytest's own dependencies and every installed
 *   distribution, listed by `importableScript`; breaker9), at the top of the repository or of a
 *   folder of the repository the test run's `PYTHONPATH` names (the command's `PYTHONPATH=...`
 *   as the shell expands it, `$PWD/lib` or `/testbed/src` too, and the environment's own);
 *   patches that change existing files of such names are not flagged (the repository may be
 *   pytest itself, as pytest-dev instances are);
 * - code outside the tests that reaches into the test runner: added lines naming pytest's
 *   internals (`_pytest`, `pluggy`), pytest's outcome functions and hooks (`pytest.skip(`,
 *   `pytest.xfail(`, `pytest.exit(`, `pytest.fail(`, `pytest.hookimpl`), node's runner internals
 *   or berth's probe (a text check: code that builds these names at run time is left to the
 *   runner report);
 * - JavaScript: test-runner configuration (`jest.config.*`, `vitest.config.*`, `vite.config.*`,
 *   `.mocharc*`, `karma.conf.*`, `ava.config.*`, `.taprc`, Babel configs, which jest applies to
 *   the tests), `.npmrc` (`node-options` reaches every `npm test`), anything under
 *   `node_modules/`, and in `package.json` (its keys read from its text after the patch,
 *   `packageJsonChanges`) changed scripts, runner settings other than time limits and coverage
 *   thresholds, install overrides, and dependencies that are no registry version (`file:`, git,
 *   aliases), or node options (`--require`, `node-options`) in any changed line; a version bump
 *   of a devDependency (`"tap": "^16.0.0"`) is a fix's business.
 *
 * The SWE-bench harness grades such patches like any other (files the model adds that the test
 * patch does not mention are never reset: its issue #631); berth records them under both rules
 * and refuses a pass under its default rules.
 */
import { posix } from 'node:path';
import { applyPatch, parsePatch, reversePatch, type StructuredPatch } from 'diff';
import { binaryContent, parseDiff, patchFiles, sectionText } from '../../util/patch-files.ts';
import { shellQuote } from '../../util/shell.ts';
import { PYTHON_STDLIB_MODULES } from './python-stdlib.ts';
import type { TamperFinding } from './types.ts';

/**
 * Files whose text after the patch berth reads to place changed lines: the pytest sections of
 * `setup.cfg`, `tox.ini` and `pyproject.toml`, the keys of `package.json`.
 */
export const SECTIONED_CONFIGS = new Set(['setup.cfg', 'tox.ini', 'pyproject.toml', 'package.json']);

/** pytest configuration keys a fix may change (they add markers and warning filters only). */
const HARMLESS_KEYS = new Set(['markers', 'filterwarnings', 'minversion']);

const JS_CONFIG = [
  /^jest\.config\.[cm]?[jt]s(on)?$/,
  /^vitest\.(config|workspace)\.[cm]?[jt]s$/,
  /^vite\.config\.[cm]?[jt]s$/,
  /^\.mocharc(\.[cm]?js|\.json|\.jsonc|\.ya?ml)?$/,
  /^karma\.conf\.[cm]?[jt]s$/,
  /^ava\.config\.[cm]?js$/,
  /^\.taprc$/,
  /^\.babelrc(\.[cm]?js|\.json)?$/,
  /^babel\.config\.[cm]?js(on)?$/,
  /^\.npmrc$/,
];

/** Keys of `package.json` whose entries name packages to install, by version. */
const DEPENDENCY_KEYS = new Set([
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
]);

/**
 * Keys of `package.json` that decide how tests are run or what is installed: its scripts (`npm
 * test` and what the test command runs), the runners' settings, npm's `config`, and the
 * install's overrides, workspaces and package manager.
 */
const PACKAGE_RUNNER_KEYS = new Set([
  'scripts',
  'config',
  'jest',
  'mocha',
  'ava',
  'tap',
  'c8',
  'nyc',
  'vitest',
  'babel',
  'overrides',
  'resolutions',
  'pnpm',
  'workspaces',
  'packageManager',
  'volta',
]);

/** Runner settings a fix may change (time limits, coverage thresholds): they decide no test's outcome. */
const HARMLESS_RUNNER_KEYS = new Set([
  'timeout',
  'testTimeout',
  'slow',
  'check-coverage',
  'coverageThreshold',
  'branches',
  'lines',
  'functions',
  'statements',
]);

/** A dependency version a registry resolves (`^1.2.3`, `>=1 <2`, `1.x`, `latest`): no path, URL, git or alias. */
const REGISTRY_VERSION = /^[\w.*^~<>=|+ -]*$/;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * What a change to `package.json` changes that can decide how its tests run, from its text
 * after the patch and the file's diff (undone on that text to get the text before): changed
 * scripts and runner settings (other than `HARMLESS_RUNNER_KEYS`), dependencies that are not a
 * registry version (`file:`, `link:`, git, URLs, `npm:` aliases). Version bumps, dependencies
 * added or removed, and every other key (`engines`, `exports`, `files`...) are a fix's business.
 * Undefined when the texts cannot be read as JSON: then the changed lines are matched instead.
 */
export function packageJsonChanges(
  after: string,
  diff: StructuredPatch | undefined,
  created: boolean,
): string[] | undefined {
  let before: unknown = {};
  let next: unknown;
  try {
    next = JSON.parse(after);
    if (!created) {
      if (!diff) return undefined;
      const text = applyPatch(after, reversePatch(diff));
      if (text === false) return undefined;
      before = JSON.parse(text);
    }
  } catch {
    return undefined;
  }
  if (!isObject(before) || !isObject(next)) return undefined;
  const out: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(next)])) {
    const [was, now] = [before[key], next[key]];
    if (same(was, now)) continue;
    if (DEPENDENCY_KEYS.has(key)) {
      if (now === undefined) continue;
      if (!isObject(now)) {
        out.push(key);
        continue;
      }
      const old = isObject(was) ? was : {};
      for (const [name, version] of Object.entries(now))
        if (!same(old[name], version) && !(typeof version === 'string' && REGISTRY_VERSION.test(version)))
          out.push(`${key}.${name}: ${JSON.stringify(version)}`);
    } else if (PACKAGE_RUNNER_KEYS.has(key)) {
      if (key !== 'scripts' && isObject(was) && isObject(now)) {
        for (const sub of new Set([...Object.keys(was), ...Object.keys(now)]))
          if (!same(was[sub], now[sub]) && !HARMLESS_RUNNER_KEYS.has(sub)) out.push(`${key}.${sub}`);
      } else if (isObject(was) && isObject(now)) {
        for (const sub of new Set([...Object.keys(was), ...Object.keys(now)]))
          if (!same(was[sub], now[sub])) out.push(`${key}.${sub}`);
      } else out.push(key);
    }
  }
  return out;
}

/** pytest's own settings files, whole (pytest 9 reads `pytest.toml` and `.pytest.toml` before the others). */
const PYTEST_SETTINGS_FILES = new Set(['pytest.ini', '.pytest.ini', 'pytest.toml', '.pytest.toml']);

const PY_SHADOWS = new Set(['pytest.py', 'py.py', 'pluggy.py', 'sitecustomize.py', 'usercustomize.py']);
/** Module names whose compiled forms (`pytest.cpython-311-x86_64-linux-gnu.so`, `pytest.abi3.so`) shadow too. */
const SHADOWED_MODULES = new Set(['pytest', 'py', 'pluggy', '_pytest', 'sitecustomize', 'usercustomize']);

/**
 * Top-level names Python's standard library and pytest try to import at start-up on Linux and
 * find nowhere (other interpreters' and Windows' modules: `copy` tries `org.python.core`, Jython's).
 * A folder or module of that name at the top of `sys.path` is imported then, before berth's
 * probe, even as a namespace package with no `__init__.py` (breaker13 F2: a created `org/`
 * replaced `os.write` and scrubbed the probe's report). Found by a `sys.meta_path` recorder
 * under CPython 3.11 with pytest 7.2 and 9; the Windows names complete the set.
 */
const STARTUP_LOOKUPS = new Set([
  'org',
  'java',
  '__pypy__',
  'msvcrt',
  '_winapi',
  'nt',
  'winreg',
  '_overlapped',
  '_wmi',
]);

/** Whether a created repository path puts a `STARTUP_LOOKUPS` name at the top of one of `roots`. */
function shadowsStartupLookup(path: string, roots: readonly string[]): boolean {
  for (const root of roots) {
    const below = root === '' ? path : path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined;
    if (below === undefined) continue;
    const first = below.split('/')[0] as string;
    const name = below.includes('/') ? first : first.split('.')[0];
    if (name !== undefined && STARTUP_LOOKUPS.has(name)) return true;
  }
  return false;
}

/** Folders of the runners themselves: a patch to pytest's own code is the fix when pytest is the repository. */
const RUNNER_PACKAGES = new Set(['_pytest', 'pytest', 'pluggy']);

/**
 * Code outside the tests that reaches into the test runner or berth's probe: pytest's internals
 * (`_pytest`, `pluggy`), pytest's outcome functions and hooks (`pytest.skip(`, `pytest.xfail(`,
 * `pytest.exit(`, `pytest.fail(`, `pytest.hookimpl`), `node:test`'s runner internals, and berth's
 * own names. A library's code has no use for them.
 */
const RUNNER_REFERENCE =
  /(^|[^\w.])(_pytest|pluggy)\b|\bpytest\.(skip|xfail|exit|fail|hookimpl)\b|berth_probe|BERTH_PROBE|internal\/test_runner/;

/**
 * The top-level module the path `parts` (below a folder on `sys.path`) is: a module file
 * (`iniconfig.py`, `logging.cpython-311-x86_64-linux-gnu.so`, `logging.pyc` -> the name before its
 * first dot) or a package's `__init__` (`packaging/__init__.py` -> `packaging`); else undefined.
 * The one naming rule of the shadow checks.
 */
function moduleAt(parts: readonly string[]): string | undefined {
  const [first, second] = parts as [string, string?];
  if (parts.length === 1) return /\.(py|pyc|so|pyd)$/.test(first) ? first.split('.')[0] : undefined;
  return parts.length === 2 && /^__init__\.(py|pyc|so)$/.test(second as string) ? first : undefined;
}

/**
 * A module at the top of the repository (the working folder `python -m pytest` puts first on
 * `sys.path`) named like a standard-library module: `logging.py`, `logging.cpython-311-x86_64-linux-gnu.so`,
 * `logging.pyc`, `logging/__init__.py`.
 */
function shadowsStdlib(dirs: string[], base: string): boolean {
  const name = moduleAt([...dirs, base]);
  return name !== undefined && PYTHON_STDLIB_MODULES.has(name);
}

/**
 * Folder names some distributions install at the top of site-packages by mistake (`tests/`):
 * shadowing them changes nothing the tests import, and fixes create such folders.
 */
const NOT_LIBRARIES = new Set([
  'tests',
  'test',
  'testing',
  'docs',
  'doc',
  'examples',
  'benchmarks',
  'scripts',
  'src',
]);

/**
 * The top-level module a repository path would be on `sys.path` under one of `roots` (the
 * repository's top, '', and the folders the test command adds): `iniconfig.py` ->
 * `iniconfig`, `src/packaging/__init__.py` -> `packaging` (root `src`), else undefined.
 */
function topLevelModule(path: string, roots: readonly string[]): string | undefined {
  for (const root of roots) {
    const prefix = root === '' ? '' : `${root.replace(/\/+$/, '')}/`;
    if (!path.startsWith(prefix)) continue;
    const name = moduleAt(path.slice(prefix.length).split('/'));
    if (name !== undefined) return name;
  }
  return undefined;
}

/** A created module named like one the environment imports from outside the repository. */
function shadowsInstalled(path: string, names: ReadonlySet<string>, roots: readonly string[]): boolean {
  const name = topLevelModule(path, roots);
  return name !== undefined && !NOT_LIBRARIES.has(name) && names.has(name);
}

/** The value of each `PYTHONPATH=...` assignment of a command, as written (quotes and `$` kept). */
function pythonPathWords(command: string): string[] {
  return [...command.matchAll(/\bPYTHONPATH=((?:"[^"]*"|'[^']*'|[^\s;&|<>"'])*)/g)].map(
    (m) => m[1] as string,
  );
}

/**
 * The folders besides the repository's top where a test command puts modules first on
 * `sys.path`, as far as its text tells: the plain relative entries of a `PYTHONPATH=...` it sets
 * (`PYTHONPATH=src pytest`). Entries the text does not tell (absolute, `$PWD/lib`, `$(pwd)`,
 * `$SRC`) and the environment's own `PYTHONPATH` are resolved in the environment by
 * `importableScript` (trust19: they were skipped, so `PYTHONPATH=$PWD/lib` let a created
 * `lib/iniconfig.py` replace pytest's dependency unseen).
 */
export function importRoots(command: string): string[] {
  const roots = new Set<string>(['']);
  for (const word of pythonPathWords(command)) {
    for (const entry of word.replace(/["']/g, '').split(':')) {
      const e = entry.replace(/^\.\/+/, '').replace(/\/+$/, '');
      if (
        e !== '' &&
        e !== '.' &&
        !e.startsWith('/') &&
        !e.includes('$') &&
        !e.includes('`') &&
        !e.includes('..')
      )
        roots.add(e);
    }
  }
  return [...roots];
}

/** A module a patch creates: its top-level name, and whether it sits at the top of the repository. */
export interface CreatedModule {
  name: string;
  /** `iniconfig.py` or `packaging/__init__.py` (on `sys.path` under the repository's top, root ''). */
  top: boolean;
}

/**
 * The modules a patch creates in any folder (`lib/iniconfig.py` -> `iniconfig`,
 * `src/packaging/__init__.py` -> `packaging`): what `importableScript` asks about, since which
 * folders are on `sys.path` is known only once it has resolved the command's `PYTHONPATH`. A
 * name created both at the top and deeper counts as at the top.
 */
export function createdModules(patch: string): CreatedModule[] {
  const out = new Map<string, boolean>();
  for (const f of patchFiles(patch)) {
    if (!f.created || !f.newPath) continue;
    // Its folder's package, or itself: the module it is below whichever folder is on sys.path.
    const parts = f.newPath.split('/');
    const name = moduleAt(parts.slice(-2)) ?? moduleAt(parts.slice(-1));
    if (name === undefined || NOT_LIBRARIES.has(name)) continue;
    out.set(name, (out.get(name) ?? false) || topLevelModule(f.newPath, ['']) === name);
  }
  return [...out].map(([name, top]) => ({ name, top }));
}

/**
 * Python that prints, on one line, which of the names given as arguments the interpreter can
 * import from outside the working folder: built-in modules and every top-level module, package
 * or namespace folder of a `sys.path` entry that is not the repository or inside it (`-I`: no
 * working folder, no PYTHONPATH, no user site; an editable install's path entry to the
 * repository is left out); then, on a second line, `:`-separated, the folders of the repository
 * (relative, `.` for its top) that the entries of `BERTH_PYTHONPATH` (the test run's
 * `PYTHONPATH`, expanded by the shell) name once resolved; then its own `sys.executable`.
 */
const IMPORTABLE_PY = [
  'import os, sys, pkgutil',
  'r = os.path.realpath(os.getcwd()) + os.sep',
  'p = [e for e in sys.path if e and os.path.isdir(e) and not (os.path.realpath(e) + os.sep).startswith(r)]',
  'n = set(sys.builtin_module_names)',
  'n.update(m[1] for m in pkgutil.iter_modules(p))',
  'for e in p:',
  '    try:',
  '        n.update(f for f in os.listdir(e) if f.isidentifier() and not f.startswith("__") and os.path.isdir(os.path.join(e, f)))',
  '    except OSError:',
  '        pass',
  'print(" ".join(a for a in sys.argv[1:] if a in n))',
  'q = set()',
  'for e in os.environ.get("BERTH_PYTHONPATH", "").split(":"):',
  '    d = os.path.realpath(e) + os.sep if e else ""',
  '    if d.startswith(r) and "\\n" not in d:',
  '        q.add(os.path.relpath(d, r))',
  'print(":".join(sorted(q)))',
  'print(sys.executable if "\\n" not in sys.executable else "")',
].join('\n');

/**
 * Files by which a version manager's shim (pyenv's `.python-version`, asdf's and mise's) picks
 * the interpreter from the working folder or a folder above it: where one is, the shim decides
 * this run, so a remembered interpreter is not used (`importableScript`; any entry of the name
 * counts, a dangling link too).
 */
const VERSION_FILES = ['.python-version', '.tool-versions', '.mise.toml', 'mise.toml', '.rtx.toml'];

/**
 * An interpreter a shim on PATH ran in an earlier trial (issue 18: pyenv's shim is bash scripts,
 * 1.5 to 2 s of a trial's wall under load, 0.5 s of CPU, against 0.5 s for the interpreter
 * itself): `found` is what `command -v` named, `executable` the interpreter's `sys.executable`.
 */
export interface KnownPython {
  found: string;
  executable: string;
}

/**
 * Shell lines printing `mark`, then on one line which of `modules` the environment's python
 * (a conda environment's the test command activates, else `python`, else `python3`) imports from
 * outside the repository, then on one line the repository's folders the test run's `PYTHONPATH`
 * names (the environment's own, and each `PYTHONPATH=...` of `command` as the shell expands it in
 * the repository: `$PWD/lib`, `/testbed/src`), then the interpreter's `sys.executable` and the
 * path `command -v` found for it (empty when a version file was seen), then `mark` again;
 * `readImportable` reads them back. Nothing when `modules` is empty. The command is the task's
 * (trusted); its `PYTHONPATH` words are expanded in a subshell, as the test run expands them.
 *
 * What keeps it cheap (issue 18) without changing an answer `scanPatch` uses:
 * - when the test run's `PYTHONPATH` is empty (no entry after expansion), only the repository's
 *   top is on `sys.path` among its folders, so only modules created there are asked about, and
 *   no python runs when there is none;
 * - `known` (an earlier trial's, same environment variables): when the first candidate on PATH
 *   is still `known.found` and no version file (`VERSION_FILES`) is in the working folder or
 *   above it, `known.executable` is run directly instead of the shim (it falls back to the
 *   candidates if it fails).
 */
export function importableScript(
  modules: readonly CreatedModule[],
  mark: string,
  command = '',
  known?: KnownPython,
): string {
  if (modules.length === 0) return '';
  const all = modules.map((m) => shellQuote(m.name)).join(' ');
  // A plain relative entry of the command's own text puts more than the top on sys.path.
  const top =
    importRoots(command).length > 1
      ? all
      : modules
          .filter((m) => m.top)
          .map((m) => shellQuote(m.name))
          .join(' ');
  // The harness's container command activates a conda environment first
  // (swebench/specs.ts: `source /opt/miniconda3/bin/activate`, `conda activate testbed`):
  // its python is the one the tests run.
  const conda = command.match(/\bconda activate ([A-Za-z0-9_.-]+)/)?.[1];
  const pythons = [
    ...(conda ? [shellQuote(`/opt/miniconda3/envs/${conda}/bin/python`)] : []),
    'python',
    'python3',
  ].join(' ');
  const expand = pythonPathWords(command).map(
    (word) => `berth_pp="$berth_pp:$( (PYTHONPATH=${word}; printf '%s' "$PYTHONPATH") 2>/dev/null )"; `,
  );
  const run = (py: string) => `BERTH_PYTHONPATH="$berth_pp" ${py} -I -c "$berth_code" "$@" 2>/dev/null`;
  const importable = [
    'berth_importable() {',
    `berth_vf=; for berth_d in "$PWD" "$(pwd -P)"; do while :; do for berth_f in ${VERSION_FILES.join(' ')}; do if [ -e "$berth_d/$berth_f" ] || [ -L "$berth_d/$berth_f" ]; then berth_vf=1; fi; done; case "$berth_d" in /|'') break;; esac; berth_d="\${berth_d%/*}"; done; done`,
    ...(known
      ? [
          `berth_found=; for berth_py in ${pythons}; do if berth_found=$(command -v "$berth_py" 2>/dev/null); then break; fi; berth_found=; done`,
          `if [ -z "$berth_vf" ] && [ "$berth_found" = ${shellQuote(known.found)} ] && [ -x ${shellQuote(known.executable)} ] && ${run(shellQuote(known.executable))}; then printf '%s\\n' "$berth_found"; return; fi`,
        ]
      : []),
    `for berth_py in ${pythons}; do if command -v "$berth_py" >/dev/null 2>&1 && ${run('"$berth_py"')}; then if [ -z "$berth_vf" ]; then command -v "$berth_py"; else echo; fi; break; fi; done`,
    '}',
  ].join('\n');
  return [
    `echo '${mark}'; berth_pp="\${PYTHONPATH-}"; ${expand.join('')}berth_code=${shellQuote(IMPORTABLE_PY)}`,
    importable,
    `case "$berth_pp" in *[!:]*) berth_importable ${all};; *) ${top === '' ? ':' : `berth_importable ${top}`};; esac; echo '${mark}'`,
  ].join('\n');
}

/**
 * The names `importableScript` printed at the start of `output`, the repository folders the
 * test run's `PYTHONPATH` names (`''` for its top), the interpreter that answered as a
 * `KnownPython` (when a later trial may run it directly), and the rest of the output.
 */
export function readImportable(
  output: string,
  mark: string,
): { names: Set<string>; roots: string[]; python?: KnownPython; rest: string } {
  const end = output.indexOf(`${mark}\n`, mark.length + 1);
  if (!output.startsWith(`${mark}\n`) || end === -1) return { names: new Set(), roots: [], rest: output };
  const lines = output.slice(mark.length + 1, end).split('\n');
  const [listed = '', folders = '', executable = '', found = ''] = lines;
  return {
    names: new Set(listed.split(/\s+/).filter((n) => n !== '')),
    roots: folders
      .split(':')
      .filter((f) => f !== '')
      .map((f) => (f === '.' ? '' : f)),
    // Exactly the four lines: no line of the answer can stand in for the interpreter's (the
    // repository's folders are printed only without a newline in their names).
    ...(lines.length === 5 && lines[4] === '' && executable.startsWith('/') && found.startsWith('/')
      ? { python: { found, executable } }
      : {}),
    rest: output.slice(end + mark.length + 1),
  };
}

/** Test code (tests may call pytest.skip and friends): test folders and test_*.py / *_test.py / *.test.js files. */
function isTestPath(path: string): boolean {
  const parts = path.split('/');
  const base = parts[parts.length - 1] as string;
  return (
    parts.slice(0, -1).some((d) => /^(tests?|testing|__tests__)$/.test(d)) ||
    /^test_.*\.py$|_test\.py$|\.(test|spec)\.[cm]?[jt]s$/.test(base)
  );
}

/** Changed lines of one file: `+`/`-` text with the line number it has after (or had before) the patch. */
interface ChangedLine {
  text: string;
  added: boolean;
  /** 1-based line in the new file (added lines) or the line it would sit at (removed lines). */
  line: number;
}

function changedLines(hunks: ReturnType<typeof parsePatch>[number]['hunks']): ChangedLine[] {
  const out: ChangedLine[] = [];
  for (const hunk of hunks) {
    let line = hunk.newStart;
    for (const l of hunk.lines) {
      if (l.startsWith('+')) out.push({ text: l.slice(1), added: true, line: line++ });
      else if (l.startsWith('-')) out.push({ text: l.slice(1), added: false, line });
      else if (l.startsWith(' ')) line++;
    }
  }
  return out;
}

/** The section (`[name]` header) and the key in effect at each line of an ini/toml text (index = 1-based line). */
function layoutOf(text: string): { section: string; key?: string }[] {
  const layout: { section: string; key?: string }[] = [{ section: '' }];
  let section = '';
  let key: string | undefined;
  for (const raw of text.split('\n')) {
    const m = raw.match(/^\s*\[+\s*([^\]]+?)\s*\]+\s*(#.*)?$/);
    if (m) {
      section = sectionName(m[1] as string);
      key = undefined;
    } else if (/^\S/.test(raw)) key = keyOf(raw) ?? key;
    layout.push({ section, ...(key !== undefined ? { key } : {}) });
  }
  return layout;
}

/**
 * A section header's name as TOML reads it: quotes dropped, spaces around the dots too
 * (`[ tool . pytest . ini_options ]` is `tool.pytest.ini_options`: breaker13 F5).
 */
function sectionName(header: string): string {
  return header
    .replace(/["']/g, '')
    .replace(/\s*\.\s*/g, '.')
    .trim();
}

/**
 * Characters Python's `str.splitlines` (pytest's ini reader) ends a line at besides `\n`: a file
 * with them reads as other lines to pytest than to berth (breaker13 F4: form feeds made
 * `[pytest]` and `addopts` lines of what berth read as one comment). A `\r` before `\n` is CRLF.
 */
const OTHER_LINE_BREAKS = /\r(?!$)|[\v\f\x1c-\x1e\x85\u2028\u2029]/;

function isPytestSection(file: string, section: string): boolean {
  const s = section.toLowerCase();
  if (/(^|\.)pytest11$/.test(s) || s === 'options.entry_points' || s === 'entry_points') return true;
  if (file === 'pyproject.toml')
    return s === 'tool.pytest.ini_options' || s === 'tool.pytest' || s.startsWith('tool.pytest.');
  if (file === 'setup.cfg') return s === 'tool:pytest' || s === 'pytest';
  return s === 'pytest';
}

/** The key a config line sets (`addopts = ...` -> `addopts`), or undefined for continuation lines. */
function keyOf(text: string): string | undefined {
  const m = text.match(/^\s*([A-Za-z0-9_.-]+)\s*[=:]/);
  return m ? (m[1] as string).toLowerCase() : undefined;
}

/** Files a binary patch may change unread: pictures, fonts, recordings (no runner reads them). */
const MEDIA_FILE = /\.(png|jpe?g|gif|bmp|ico|webp|tiff?|ttf|otf|woff2?|eot|mp3|wav|ogg|flac|mp4|webm|pdf)$/i;

/**
 * Findings for a submitted patch.
 * @param configText the text after the patch of the `SECTIONED_CONFIGS` it changes (repo-relative
 *   path -> text), read from the environment; without it, a changed line counts when it names a
 *   pytest section or a dangerous key itself.
 * @param options.resetJsRunnerConfig for a verifier that resets JavaScript test-runner settings a
 *   real fix may change too (`package.json`, jest/vite/vitest/mocha configuration, `.npmrc`) to
 *   the base and runs the tests without them (the multilingual one): their findings come out
 *   without a veto, said reset, instead of refusing the fix as tampering.
 */
export function scanPatch(
  patch: string,
  configText: Record<string, string> = {},
  importable?: { names: ReadonlySet<string>; roots: readonly string[] },
  options: { resetJsRunnerConfig?: boolean } = {},
): TamperFinding[] {
  const findings: TamperFinding[] = [];
  // Each file's hunks, read section by section from berth's one diff parser, so a file is named
  // by the same -p1 rule as everywhere else (a `z/`-prefixed diff: breaker10 F4) and one section
  // the library cannot read costs only its own lines.
  const diffByPath = new Map<string, StructuredPatch>();
  const sections = parseDiff(patch);
  for (const section of sections) {
    const path = section.newPath ?? section.oldPath;
    if (path === undefined) continue;
    try {
      const [read] = parsePatch(sectionText(section));
      if (read) diffByPath.set(path, read);
    } catch {
      // A section the library cannot read: only the file list below counts for it.
    }
  }
  /** `jsRunnerConfig`: a JavaScript runner setting (`options.resetJsRunnerConfig`). */
  const add = (kind: string, path: string, said: string, jsRunnerConfig = false) => {
    const reset = jsRunnerConfig && options.resetJsRunnerConfig === true;
    const message = reset ? `${said} (reset to the base: the tests ran without it)` : said;
    const same = findings.find((f) => f.kind === kind && f.message === message);
    if (same) return;
    findings.push({ kind, layer: 'patch', message, veto: !reset, paths: [path] });
  };

  for (const file of sections) {
    const path = file.newPath ?? file.oldPath;
    if (!path || file.deleted) continue;
    const base = posix.basename(path);
    const dirs = path.split('/').slice(0, -1);
    // A `GIT binary patch` has no hunk lines: a literal's whole decoded content is read as added
    // lines; one berth cannot read (a delta, no data) is refused unless the file is a picture,
    // a font or a recording (breaker12 F4: setup.cfg's addopts as a binary literal went unread).
    const binary = binaryContent(file);
    if (binary.kind === 'unreadable' && !MEDIA_FILE.test(base)) {
      add(
        'runner-config',
        path,
        `the patch changes ${path} with binary data berth cannot read (a git delta, or no data): what the file becomes is unknown`,
      );
      continue;
    }
    const lines =
      binary.kind === 'literal'
        ? binary.data
            .toString('utf8')
            .split('\n')
            .map((text, i) => ({ text: text.replace(/\r$/, ''), added: true, line: i + 1 }))
        : changedLines(diffByPath.get(path)?.hunks ?? []);

    if (base === 'conftest.py') {
      add(
        'runner-plugin',
        path,
        `the patch ${file.created ? 'creates' : 'changes'} ${path}, a pytest plugin the test run loads`,
      );
      continue;
    }
    if (
      dirs.some((d) => /\.(egg|dist)-info$/.test(d)) ||
      /\.egg-link$/.test(base) ||
      base.startsWith('__editable__')
    ) {
      add(
        'runner-plugin',
        path,
        `the patch ${file.created ? 'creates' : 'changes'} ${path}: distribution metadata on sys.path can declare pytest plugins (entry points) that pytest loads by itself`,
      );
      continue;
    }
    // A settings file made a link: berth reads no file through a link, so its lines would be
    // the link's target text, while pytest and node follow it (breaker13 F3: a created tox.ini
    // linked to docs/settings.txt set `addopts = -p <module>` unseen).
    if (
      (PYTEST_SETTINGS_FILES.has(base) ||
        SECTIONED_CONFIGS.has(base) ||
        JS_CONFIG.some((re) => re.test(base))) &&
      /^(new file mode|new mode) 120000$/m.test(file.header)
    ) {
      add(
        'runner-config',
        path,
        `the patch makes ${path} a link: what the runner reads there is another file`,
      );
      continue;
    }
    if (PYTEST_SETTINGS_FILES.has(base)) {
      add(
        'runner-config',
        path,
        `the patch ${file.created ? 'creates' : 'changes'} ${path}, pytest's configuration`,
      );
      continue;
    }
    if (
      file.created &&
      (PY_SHADOWS.has(base) ||
        SHADOWED_MODULES.has(base.split('.')[0] as string) ||
        base.endsWith('.pth') ||
        /\.py[co]$/.test(base) ||
        dirs.some((d) => d === '_pytest' || d === 'pytest' || d === 'pluggy') ||
        shadowsStdlib(dirs, base) ||
        shadowsStartupLookup(path, importable?.roots ?? ['']) ||
        (importable !== undefined && shadowsInstalled(path, importable.names, importable.roots)))
    ) {
      add(
        'runner-shadow',
        path,
        `the patch creates ${path}, which can replace the test runner or run at interpreter start-up`,
      );
      continue;
    }
    if (base.endsWith('.pth') || base === 'sitecustomize.py' || base === 'usercustomize.py') {
      add('runner-shadow', path, `the patch changes ${path}, which runs at interpreter start-up`);
      continue;
    }
    if (dirs.includes('node_modules')) {
      add(
        'runner-shadow',
        path,
        `the patch ${file.created ? 'creates' : 'changes'} ${path} under node_modules: it replaces a dependency the tests load`,
      );
      continue;
    }
    if (JS_CONFIG.some((re) => re.test(base))) {
      add(
        'runner-config',
        path,
        `the patch ${file.created ? 'creates' : 'changes'} ${path}, a test runner's configuration`,
        true,
      );
      continue;
    }
    if (base === 'package.json') {
      // Its keys, where its text after the patch was read (trust19: a devDependency bump of
      // "tap" or "jest" matched the line check below and refused honest fixes); node options
      // in any changed line either way.
      const text = configText[path];
      const keys =
        text !== undefined ? packageJsonChanges(text, diffByPath.get(path), file.created) : undefined;
      const hits = [
        ...(keys ?? []),
        ...lines
          .filter((l) =>
            keys === undefined
              ? /"(test[\w:-]*|jest|mocha|ava|vitest|c8|nyc|tap)"\s*:|--(require|import|loader|experimental-loader)\b|node-options/.test(
                  l.text,
                )
              : /--(require|import|loader|experimental-loader)\b|node-options/.test(l.text),
          )
          .map((l) => l.text.trim()),
      ];
      if (hits.length > 0)
        add(
          'runner-config',
          path,
          `the patch changes test settings in ${path}: ${hits.slice(0, 3).join(' | ')}${hits.length > 3 ? ' ...' : ''}`,
          true,
        );
      continue;
    }
    if (base === 'setup.py') {
      const hits = lines.filter((l) => l.added && /pytest11/.test(l.text));
      if (hits.length > 0)
        add('runner-plugin', path, `the patch declares a pytest11 entry point (a pytest plugin) in ${path}`);
      continue;
    }
    if (/\.(py|[cm]?[jt]s)$/.test(base) && !isTestPath(path) && !dirs.some((d) => RUNNER_PACKAGES.has(d))) {
      const hits = lines.filter((l) => l.added && RUNNER_REFERENCE.test(l.text));
      if (hits.length > 0) {
        add(
          'runner-reference',
          path,
          `the patch adds code that reaches into the test runner to ${path}: ${hits
            .map((l) => l.text.trim())
            .slice(0, 3)
            .join(' | ')}`,
        );
        continue;
      }
    }
    if (SECTIONED_CONFIGS.has(base)) {
      const text = configText[path];
      const layout = text !== undefined ? layoutOf(text) : undefined;
      const bad: string[] = [];
      for (const l of lines) {
        if (OTHER_LINE_BREAKS.test(l.text) && base !== 'package.json') {
          bad.push(`${l.added ? '+' : '-'}${JSON.stringify(l.text.trim()).slice(1, -1)}`);
          continue;
        }
        if (l.text.trim() === '' || l.text.trim().startsWith('#')) continue;
        const header = l.text.match(/^\s*\[+\s*([^\]]+?)\s*\]+/);
        const at = layout?.[Math.min(l.line, layout.length - 1)];
        const section = header ? sectionName(header[1] as string) : at?.section;
        // TOML's dotted keys and inline tables reach pytest's table from `[tool]` or the top
        // (`pytest.ini_options.addopts = ...` under `[tool]`: breaker13 F5); in pyproject.toml a
        // changed line of the top or a `tool` table that names pytest counts.
        const tomlTool =
          base === 'pyproject.toml' &&
          /pytest/i.test(l.text) &&
          (section === undefined || section === '' || /^tool(\.|$)/i.test(section));
        const pytestLine =
          tomlTool ||
          (section !== undefined
            ? isPytestSection(base, section)
            : /pytest/i.test(l.text) ||
              /^\s*(addopts|python_files|python_functions|python_classes|testpaths|plugins)\s*[=:]/.test(
                l.text,
              ));
        if (!pytestLine) continue;
        // The key this line sets, or continues (an indented line of a multi-line value).
        const key = header ? undefined : /^\s/.test(l.text) ? at?.key : keyOf(l.text);
        if (key !== undefined && HARMLESS_KEYS.has(key)) continue;
        bad.push(`${l.added ? '+' : '-'}${l.text.trim()}`);
      }
      if (bad.length > 0)
        add(
          'runner-config',
          path,
          `the patch changes pytest settings in ${path}: ${bad.slice(0, 3).join(' | ')}${bad.length > 3 ? ' ...' : ''}`,
        );
    }
  }
  return findings;
}

/** The `SECTIONED_CONFIGS` a patch changes (to read their text after the patch). */
export function sectionedConfigsIn(patch: string): string[] {
  return patchFiles(patch)
    .filter((f) => !f.deleted && f.newPath && SECTIONED_CONFIGS.has(posix.basename(f.newPath)))
    .map((f) => f.newPath as string);
}

/** Bytes of a pytest settings file read to place a patch's changed lines (`configTextScript`). */
const CONFIG_TEXT_BYTES = 1024 * 1024;

/**
 * Shell lines printing the text of each of `paths` (the `SECTIONED_CONFIGS` a patch changes) as
 * the patch left them, for `scanPatch`: a line `<mark> <index in paths>`, then the file's first
 * MiB in base64 on one line, empty when it is not a regular file (a link is never followed).
 * `readConfigTexts` reads them back.
 */
export function configTextScript(paths: readonly string[], mark: string): string {
  return paths
    .map((path, index) => {
      const q = shellQuote(path);
      return `printf '%s %s\\n' '${mark}' ${index}; if [ -f ${q} ] && [ ! -L ${q} ]; then head -c ${CONFIG_TEXT_BYTES} -- ${q} 2>/dev/null | base64 | tr -d '\\n'; fi; echo`;
    })
    .join('\n');
}

/**
 * The texts `configTextScript(paths, mark)` printed at the start of `output` (path -> text; none
 * for a file that was not there to read), and the rest of the output.
 */
export function readConfigTexts(
  output: string,
  paths: readonly string[],
  mark: string,
): { texts: Record<string, string>; rest: string } {
  const lines = output.split('\n');
  const texts: Record<string, string> = {};
  let cut = 0;
  for (let i = 0; i < lines.length && (lines[i] as string).startsWith(`${mark} `); i += 2) {
    const path = paths[Number((lines[i] as string).slice(mark.length + 1))];
    const body = lines[i + 1] ?? '';
    if (path !== undefined && body !== '') texts[path] = Buffer.from(body, 'base64').toString('utf8');
    cut = i + 2;
  }
  return { texts, rest: lines.slice(cut).join('\n') };
}
