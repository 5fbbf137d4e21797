/**
 * The SWE-bench harness's per-repository facts for its Python repositories, as berth's own
 * data: for a row's `repo` and `version`, the test command, the install step and extra
 * commands the harness's eval script runs, and the log parser it grades with.
 *
 * Source (facts re-expressed, no code copied): SWE-bench/SWE-bench
 * `swebench/harness/constants/python.py` (`MAP_REPO_VERSION_TO_SPECS_PY`, the `TEST_*`
 * commands) and `swebench/harness/log_parsers/python.py` (`MAP_REPO_TO_PARSER_PY`) at tag
 * v4.0.4 (commit c7c22a916c9215e709722bc5ab18df4062dc6248); the `test_cmd`, `install` and
 * `eval_commands` values are unchanged up to commit 25c52357b750af7e636daa54d03fce9861b3f3e6,
 * the file's last version before SWE-bench 5 moved the commands into the dataset rows.
 * Test directives: `swebench/harness/test_spec/python.py:get_test_directives` (same tag).
 * Instance images: `swebench/harness/test_spec/test_spec.py` and `run_evaluation.py`
 * (`--namespace swebench`, `__` written `_1776_` in the remote name).
 */
import { InputError } from '../../errors.ts';
import { findParser } from '../../parsers/registry.ts';

/** Test commands of the harness (`TEST_*` in constants/python.py; `TEST_PYTEST` as finally assigned). */
const PYTEST = 'pytest -rA';
const ASTROPY_OLD = 'pytest -rA -vv -o console_output_style=classic --tb=no';
const DJANGO = './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1';
const DJANGO_NO_PARALLEL = './tests/runtests.py --verbosity 2';
const SEABORN = 'pytest --no-header -rA';
const SPHINX = 'tox --current-env -epy39 -v --';
const SYMPY = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose";

const PIP_E = 'python -m pip install -e .';
const DJANGO_LOCALE_OLD = [
  'export LANG=en_US.UTF-8',
  'export LC_ALL=en_US.UTF-8',
  'export PYTHONIOENCODING=utf8',
  'export LANGUAGE=en_US:en',
];
const DJANGO_LOCALE_3 = [
  "sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen",
  'export LANG=en_US.UTF-8',
  'export LANGUAGE=en_US:en',
  'export LC_ALL=en_US.UTF-8',
];

/** One group of versions of a repository that share their commands. */
interface VersionGroup {
  versions: readonly string[];
  /** The harness's `test_cmd`; the test directives are appended to it. */
  testCmd: string;
  /** The harness's `install`, which its eval script runs again before the tests. */
  install?: string;
  /** The harness's `eval_commands`, run first in its eval script. */
  evalCommands?: readonly string[];
}

interface RepoSpecs {
  /** SWE-bench's parser for the repository (`MAP_REPO_TO_PARSER_PY`). */
  swebenchParser: string;
  /** berth's parser for that output, when berth has one (registry name). */
  berthParser?: string;
  groups: readonly VersionGroup[];
}

const v = (list: string): string[] => list.split(' ');

/** repo -> versions -> commands, for every Python repository of the harness that has a test command. */
const SPECS: Readonly<Record<string, RepoSpecs>> = {
  'astropy/astropy': {
    swebenchParser: 'parse_log_astropy',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('3.0 3.1 3.2 4.1 4.2 4.3 5.0 5.1 5.2 v5.3'),
        testCmd: PYTEST,
        install: 'python -m pip install -e .[test] --verbose',
      },
      {
        versions: v('0.1 0.2 0.3 0.4 1.1 1.2 1.3'),
        testCmd: ASTROPY_OLD,
        install: 'python -m pip install -e .[test] --verbose',
      },
    ],
  },
  'django/django': {
    swebenchParser: 'parse_log_django',
    berthParser: 'django',
    groups: [
      {
        versions: v('1.7 1.8 1.10 1.11 2.0 2.1 2.2'),
        testCmd: DJANGO,
        install: 'python setup.py install',
        evalCommands: DJANGO_LOCALE_OLD,
      },
      {
        versions: ['1.9'],
        testCmd: DJANGO_NO_PARALLEL,
        install: 'python setup.py install',
        evalCommands: DJANGO_LOCALE_OLD,
      },
      { versions: v('1.4 1.5 1.6'), testCmd: DJANGO, install: 'python setup.py install' },
      { versions: v('3.0 3.1 3.2'), testCmd: DJANGO, install: PIP_E, evalCommands: DJANGO_LOCALE_3 },
      { versions: v('4.0 4.1 4.2 5.0 5.1 5.2'), testCmd: DJANGO, install: PIP_E },
    ],
  },
  'matplotlib/matplotlib': {
    // SWE-bench's matplotlib parser is pytest's after writing `MouseButton.LEFT`/`RIGHT` as 1/3.
    swebenchParser: 'parse_log_matplotlib',
    berthParser: 'pytest',
    groups: [
      { versions: v('3.0 3.1 3.2 3.3 3.4 3.5 3.6 3.7'), testCmd: PYTEST, install: PIP_E },
      {
        versions: v('3.8 3.9'),
        testCmd: PYTEST,
        install: 'python -m pip install --no-build-isolation -e ".[dev]"',
      },
      {
        versions: v('1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1 2.2'),
        testCmd: PYTEST,
        install: 'python setup.py build; python setup.py install',
      },
    ],
  },
  'marshmallow-code/marshmallow': {
    swebenchParser: 'parse_log_marshmallow',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('2.18 2.19 2.20 3.0 3.1 3.2 3.4 3.8 3.9 3.10 3.11 3.12 3.13 3.15 3.16 3.19'),
        testCmd: PYTEST,
        install: "python -m pip install -e '.[dev]'",
      },
    ],
  },
  'mwaskom/seaborn': {
    swebenchParser: 'parse_log_seaborn',
    berthParser: 'pytest',
    groups: [
      { versions: ['0.11'], testCmd: SEABORN, install: PIP_E },
      { versions: v('0.12 0.13 0.14'), testCmd: SEABORN, install: 'python -m pip install -e .[dev]' },
    ],
  },
  'pallets/flask': {
    swebenchParser: 'parse_log_flask',
    berthParser: 'pytest',
    groups: [{ versions: v('2.0 2.1 2.2 2.3 3.0 3.1'), testCmd: PYTEST, install: PIP_E }],
  },
  'psf/requests': {
    swebenchParser: 'parse_log_requests',
    berthParser: 'pytest',
    groups: [
      {
        versions: v(
          '0.7 0.8 0.9 0.11 0.13 0.14 1.1 1.2 2.0 2.2 2.3 2.4 2.5 2.7 2.8 2.9 2.10 2.11 2.12 2.17 2.18 2.19 2.22 2.25 2.26 2.27 2.31 3.0',
        ),
        testCmd: PYTEST,
        install: 'python -m pip install .',
      },
    ],
  },
  'pvlib/pvlib-python': {
    swebenchParser: 'parse_log_pvlib',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9'),
        testCmd: PYTEST,
        install: 'python -m pip install -e .[all]',
      },
    ],
  },
  'pydata/xarray': {
    swebenchParser: 'parse_log_xarray',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('0.12 0.18 0.19 0.20 2022.03 2022.06 2022.09 2023.07 2024.05'),
        testCmd: PYTEST,
        install: PIP_E,
      },
    ],
  },
  'pydicom/pydicom': {
    swebenchParser: 'parse_log_pydicom',
    berthParser: 'pytest',
    groups: [{ versions: v('1.0 1.1 1.2 1.3 1.4 2.0 2.1 2.2 2.3 2.4 3.0'), testCmd: PYTEST, install: PIP_E }],
  },
  'pylint-dev/astroid': {
    swebenchParser: 'parse_log_astroid',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('2.5 2.6 2.7 2.8 2.9 2.10 2.12 2.13 2.14 2.15 2.16 3.0'),
        testCmd: PYTEST,
        install: PIP_E,
      },
    ],
  },
  'pylint-dev/pylint': {
    swebenchParser: 'parse_log_pylint',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('2.8 2.9 2.10 2.11 2.13 2.14 2.15 2.16 2.17 3.0 3.1 3.2 3.3 4.0'),
        testCmd: PYTEST,
        install: PIP_E,
      },
    ],
  },
  'pytest-dev/pytest': {
    swebenchParser: 'parse_log_pytest',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('4.4 4.5 4.6 5.0 5.1 5.2 5.3 5.4 6.0 6.2 6.3 7.0 7.1 7.2 7.4 8.0 8.1 8.2 8.3 8.4'),
        testCmd: PYTEST,
        install: PIP_E,
      },
    ],
  },
  'pyvista/pyvista': {
    swebenchParser: 'parse_log_pyvista',
    berthParser: 'pytest',
    groups: [
      {
        versions: v(
          '0.20 0.21 0.22 0.23 0.24 0.25 0.26 0.27 0.28 0.29 0.30 0.31 0.32 0.33 0.34 0.35 0.36 0.37 0.38 0.39 0.40 0.41 0.42 0.43',
        ),
        testCmd: PYTEST,
        install: PIP_E,
      },
    ],
  },
  'scikit-learn/scikit-learn': {
    swebenchParser: 'parse_log_scikit',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('0.20 0.21 0.22 1.3 1.4 1.5 1.6'),
        testCmd: PYTEST,
        install: 'python -m pip install -v --no-use-pep517 --no-build-isolation -e .',
      },
    ],
  },
  'sphinx-doc/sphinx': {
    // tox runs pytest; the harness's image adds `-rA` to tox.ini so the summary lines appear.
    swebenchParser: 'parse_log_sphinx',
    berthParser: 'pytest',
    groups: [
      {
        versions: v(
          '1.5 1.6 1.7 1.8 2.0 2.1 2.2 2.3 2.4 3.0 3.1 3.2 3.3 3.4 3.5 4.0 4.1 4.2 4.3 4.4 4.5 5.0 5.1 5.2 5.3 6.0 6.2 7.0 7.1 7.2 7.3 7.4 8.0 8.1',
        ),
        testCmd: SPHINX,
        install: 'python -m pip install -e .[test]',
      },
    ],
  },
  'sqlfluff/sqlfluff': {
    swebenchParser: 'parse_log_sqlfluff',
    berthParser: 'pytest',
    groups: [
      {
        versions: v('0.4 0.5 0.6 0.8 0.9 0.10 0.11 0.12 0.13 1.0 1.1 1.2 1.3 1.4 2.0 2.1 2.2'),
        testCmd: PYTEST,
        install: PIP_E,
      },
    ],
  },
  'sympy/sympy': {
    swebenchParser: 'parse_log_sympy',
    berthParser: 'sympy',
    groups: [
      {
        versions: v('0.7 1.0 1.1 1.2 1.4 1.5 1.6 1.7 1.8 1.9 1.10 1.11 1.12 1.13 1.14'),
        testCmd: SYMPY,
        install: PIP_E,
      },
    ],
  },
};

/** What the harness does for one repository version. */
export interface HarnessSpec {
  repo: string;
  version: string;
  /** The harness's test command, before the test directives. */
  testCmd: string;
  install?: string;
  evalCommands?: readonly string[];
  /** SWE-bench's log parser for the repository (e.g. `parse_log_django`). */
  swebenchParser: string;
  /** berth's registered parser for that output, or undefined when berth has none (detection is used). */
  parser?: string;
}

/** The repositories with specs, sorted (for messages). */
export function specRepositories(): string[] {
  return Object.keys(SPECS).sort();
}

/** The versions of `repo` with specs, or [] for an unknown repository. */
export function specVersions(repo: string): string[] {
  return (SPECS[repo]?.groups ?? []).flatMap((g) => g.versions);
}

/**
 * The harness's spec for a repository and version.
 * @param version the row's `version`; a number (a JSON file written without quotes) is read as
 *   its decimal text, also with one or two decimals (`3` -> `3.0`, `0.2` -> `0.20`).
 * @returns undefined when the pair is not in the harness's table.
 */
export function harnessSpec(repo: string, version: string | number): HarnessSpec | undefined {
  const specs = SPECS[repo];
  if (!specs) return undefined;
  const candidates =
    typeof version === 'number'
      ? [String(version), version.toFixed(1), version.toFixed(2)]
      : [version.trim()];
  for (const candidate of candidates) {
    const group = specs.groups.find((g) => g.versions.includes(candidate));
    if (!group) continue;
    const registered = specs.berthParser !== undefined && findParser(specs.berthParser) !== undefined;
    return {
      repo,
      version: candidate,
      testCmd: group.testCmd,
      ...(group.install !== undefined ? { install: group.install } : {}),
      ...(group.evalCommands !== undefined ? { evalCommands: group.evalCommands } : {}),
      swebenchParser: specs.swebenchParser,
      ...(registered ? { parser: specs.berthParser } : {}),
    };
  }
  return undefined;
}

/** Extensions the harness drops from the test directives (`NON_TEST_EXTS`, constants/__init__.py; `csv` without its dot, as there). */
const NON_TEST_EXTS = [
  '.json',
  '.png',
  'csv',
  '.txt',
  '.md',
  '.jpg',
  '.jpeg',
  '.pkl',
  '.yml',
  '.yaml',
  '.toml',
];

/**
 * The harness's test directives (`get_test_directives`): the `b/` path of every
 * `diff --git a/... b/...` header of the test patch (a renamed file by its new name, a deleted
 * one too), minus non-test extensions. This is the harness's own regex on purpose, not berth's
 * diff parser (src/util/patch-files.ts): a quoted or spaced path yields what the harness yields. Django runs module labels (`tests/a/b.py` -> `a.b`),
 * the other repositories the paths themselves.
 */
export function harnessDirectives(repo: string, testPatch: string): string[] {
  const paths: string[] = [];
  for (const line of testPatch.split('\n')) {
    const header = /diff --git a\/.* b\/(.*)/.exec(line);
    if (header) paths.push((header[1] as string).replace(/\r$/, ''));
  }
  const files = paths.filter((path) => !NON_TEST_EXTS.some((ext) => path.endsWith(ext)));
  if (repo !== 'django/django') return files;
  return files.map((file) => {
    let d = file.endsWith('.py') ? file.slice(0, -3) : file;
    if (d.startsWith('tests/')) d = d.slice('tests/'.length);
    return d.replaceAll('/', '.');
  });
}

/**
 * The command berth runs for a spec: the harness's test command with `{tests}` (the
 * directives, shell-quoted by the verifier). In a container (the harness's instance image)
 * it is preceded by what the harness's eval script runs first: the conda `testbed`
 * environment, `eval_commands` and `install`, each on its own line so a failing step does
 * not stop the tests (the harness's script runs without `set -e`).
 */
export function harnessTestCommand(spec: HarnessSpec, options: { container?: boolean } = {}): string {
  const run = `${spec.testCmd} {tests}`;
  if (!options.container) return run;
  return [
    'source /opt/miniconda3/bin/activate',
    'conda activate testbed',
    ...(spec.evalCommands ?? []),
    ...(spec.install !== undefined ? [spec.install] : []),
    run,
  ].join('\n');
}

/** Where a row's problem is reported. */
export type FieldLocator = (field: string) => { file: string; line: number; field: string };

/**
 * Looks up the harness's spec for a row that has no test command of its own.
 * @returns undefined when the row has no `version` and a repository the harness does not
 *   know (not a SWE-bench harness row: the run check reports the missing command).
 * @throws InputError at the row's `repo` or `version` field when the pair is not in the
 *   harness's table, suggesting a `test_cmd` in the row.
 */
export function specForRow(repo: unknown, version: unknown, at: FieldLocator): HarnessSpec | undefined {
  const knownRepo = typeof repo === 'string' && repo in SPECS;
  if ((version === undefined || version === null) && !knownRepo) return undefined;
  const hint =
    'add the test command to the row (`test_cmd` or `dockerless.test_cmd`, with {tests} where the test files go)';
  if (typeof repo !== 'string' || repo === '')
    throw new InputError(at('repo'), `no \`repo\` to find SWE-bench's test command by; ${hint}`);
  if (!(repo in SPECS))
    throw new InputError(
      at('repo'),
      `SWE-bench's harness has no test command for repository ${JSON.stringify(repo)} (known: ${specRepositories().join(', ')}); ${hint}`,
    );
  if (typeof version !== 'string' && typeof version !== 'number')
    throw new InputError(
      at('version'),
      `no \`version\` to find ${repo}'s test command by (known versions: ${specVersions(repo).join(', ')}); ${hint}`,
    );
  const spec = harnessSpec(repo, version);
  if (!spec)
    throw new InputError(
      at('version'),
      `SWE-bench's harness has no test command for ${repo} version ${JSON.stringify(version)} (known versions: ${specVersions(repo).join(', ')}); ${hint}`,
    );
  return spec;
}
