import { spawnSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ImageMap } from '../../src/environments/docker/dockerfile.ts';
import { InputError } from '../../src/errors.ts';
import {
  inDocker,
  inLocal,
  instanceImageNames,
  instanceImageProblem,
} from '../../src/tasks/swebench/instance-image.ts';
import { loadSwebench, rowToTask } from '../../src/tasks/swebench/load.ts';
import { readRowFile } from '../../src/tasks/swebench/read-rows.ts';
import { localRunProblems } from '../../src/tasks/swebench/runnable.ts';
import { harnessSpec, specRepositories } from '../../src/tasks/swebench/specs.ts';
import type { Task } from '../../src/tasks/task.ts';
import { shellQuote } from '../../src/util/shell.ts';
import { dataDir, hasData } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

/** The command the verifier runs (src/verifiers/swebench.ts: `{tests}` -> quoted test files). */
function commandOf(task: Task): string {
  if (task.verifier.kind !== 'swebench') throw new Error('expected a swebench task');
  return task.verifier.testCommand.replaceAll('{tests}', task.verifier.testFiles.map(shellQuote).join(' '));
}

/** A plain SWE-bench row (only the fields the harness reads). */
function row(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    instance_id: 'owner__name-1',
    repo: 'django/django',
    version: '4.2',
    base_commit: 'abc',
    patch: '',
    test_patch:
      'diff --git a/tests/a/tests.py b/tests/a/tests.py\n--- a/tests/a/tests.py\n+++ b/tests/a/tests.py\n',
    FAIL_TO_PASS: ['x'],
    PASS_TO_PASS: [],
    ...fields,
  };
}

function load(fields: Record<string, unknown>): Task {
  return rowToTask({ value: row(fields), file: 'rows.jsonl', line: 7 });
}

function loadError(fields: Record<string, unknown>): InputError {
  try {
    load(fields);
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('expected an InputError');
}

describe('SWE-bench harness specs for plain rows', () => {
  it('django: runtests.py with module labels from the test patch, minus non-test files', () => {
    const task = load({
      test_patch: [
        'diff --git a/tests/sitemaps_tests/test_http.py b/tests/sitemaps_tests/test_http.py',
        'diff --git a/tests/sitemaps_tests/urls/http.py b/tests/sitemaps_tests/urls/http.py',
        'diff --git a/tests/sitemaps_tests/data.json b/tests/sitemaps_tests/data.json',
        '',
      ].join('\n'),
    });
    expect(commandOf(task)).toBe(
      './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 sitemaps_tests.test_http sitemaps_tests.urls.http',
    );
    expect(task.environment).toMatchObject({ kind: 'local', repo: 'django/django', baseCommit: 'abc' });
  });

  it('django 1.9 runs without --parallel, as in the harness', () => {
    expect(commandOf(load({ version: '1.9' }))).toBe('./tests/runtests.py --verbosity 2 a.tests');
  });

  it('a renamed test file is run by its new name only (the b/ path)', () => {
    const task = load({
      repo: 'pytest-dev/pytest',
      version: '8.0',
      test_patch:
        'diff --git a/testing/old.py b/testing/new.py\nsimilarity index 90%\nrename from testing/old.py\nrename to testing/new.py\n',
    });
    expect(commandOf(task)).toBe('pytest -rA testing/new.py');
  });

  it('a version written as a JSON number is read as the harness writes it', () => {
    expect(harnessSpec('pydata/xarray', 0.2)?.version).toBe('0.20');
    expect(harnessSpec('django/django', 3)?.version).toBe('3.0');
    expect(harnessSpec('sympy/sympy', 1.1)?.version).toBe('1.1');
  });

  it('the row’s own test command wins over the specs', () => {
    const own = load({ test_cmd: 'make check {tests}' });
    expect(commandOf(own)).toBe('make check tests/a/tests.py');
    const dockerless = load({ dockerless: { test_cmd: 'python -m pytest {tests}', test_files: ['t.py'] } });
    expect(commandOf(dockerless)).toBe('python -m pytest t.py');
  });

  it('an unknown repository or version is refused at the row, naming the field and suggesting test_cmd', () => {
    const repo = loadError({ repo: 'acme/widgets', version: '1.0' });
    expect(repo.location).toMatchObject({ file: 'rows.jsonl', line: 7, field: 'repo' });
    expect(repo.message).toContain('acme/widgets');
    expect(repo.message).toContain('test_cmd');
    const version = loadError({ version: '9.9' });
    expect(version.location).toMatchObject({ line: 7, field: 'version' });
    expect(version.message).toMatch(/django\/django version "9\.9" .*known versions: .*4\.2/);
    expect(version.message).toContain('test_cmd');
    expect(loadError({ version: undefined }).location.field).toBe('version');
  });

  it('a row with no version and a repository outside the specs still loads (the run check names the missing command)', async () => {
    const task = load({ repo: 'acme/widgets', version: undefined });
    if (task.verifier.kind !== 'swebench') throw new Error('expected swebench');
    expect(task.verifier.testCommand).toBe('');
    const problems = await localRunProblems(task);
    expect(problems.map((p) => p.field)).toContain('dockerless.test_cmd');
  });

  it('covers the SWE-bench Python repositories', () => {
    for (const repo of [
      'astropy/astropy',
      'django/django',
      'pallets/flask',
      'matplotlib/matplotlib',
      'pylint-dev/pylint',
      'pytest-dev/pytest',
      'psf/requests',
      'scikit-learn/scikit-learn',
      'mwaskom/seaborn',
      'sphinx-doc/sphinx',
      'sympy/sympy',
      'pydata/xarray',
    ])
      expect(specRepositories()).toContain(repo);
    expect(harnessSpec('sphinx-doc/sphinx', '7.1')?.testCmd).toBe('tox --current-env -epy39 -v --');
    expect(harnessSpec('mwaskom/seaborn', '0.12')?.testCmd).toBe('pytest --no-header -rA');
    expect(harnessSpec('astropy/astropy', '1.3')?.testCmd).toBe(
      'pytest -rA -vv -o console_output_style=classic --tb=no',
    );
    expect(harnessSpec('astropy/astropy', 'v5.3')?.testCmd).toBe('pytest -rA');
    // The log parser: berth's pytest parser for the pytest-based repositories.
    expect(harnessSpec('psf/requests', '2.0')).toMatchObject({
      swebenchParser: 'parse_log_requests',
      parser: 'pytest',
    });
    expect(harnessSpec('django/django', '4.2')).toMatchObject({
      swebenchParser: 'parse_log_django',
      parser: 'django',
    });
    expect(harnessSpec('sympy/sympy', '1.1')).toMatchObject({
      swebenchParser: 'parse_log_sympy',
      parser: 'sympy',
    });
  });
});

describe('the harness instance image', () => {
  it('names: lower-cased, "__" written "_1776_" in the Docker Hub name only', () => {
    expect(instanceImageNames('django__django-16255')).toEqual({
      remote: 'swebench/sweb.eval.x86_64.django_1776_django-16255:latest',
      local: 'sweb.eval.x86_64.django__django-16255:latest',
    });
    expect(instanceImageNames('Pylint-Dev__astroid-1268').remote).toBe(
      'swebench/sweb.eval.x86_64.pylint-dev_1776_astroid-1268:latest',
    );
  });

  it('--env docker: a plain row runs in the instance image with the harness preamble; --env local undoes it', () => {
    const local = load({ instance_id: 'django__django-15781', version: '3.0' });
    const docker = inDocker(local);
    expect(docker.environment).toEqual({
      kind: 'docker',
      image: 'swebench/sweb.eval.x86_64.django_1776_django-15781:latest',
      workdir: '/testbed',
      network: { mode: 'no-network' },
    });
    const lines = commandOf(docker).split('\n');
    expect(lines.slice(0, 2)).toEqual(['source /opt/miniconda3/bin/activate', 'conda activate testbed']);
    expect(lines).toContain('export LC_ALL=en_US.UTF-8');
    expect(lines.at(-2)).toBe('python -m pip install -e .');
    expect(lines.at(-1)).toBe(
      './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 a.tests',
    );
    const back = inLocal(docker);
    expect(back.environment).toEqual({ kind: 'local', repo: 'django/django', baseCommit: 'abc' });
    expect(commandOf(back)).toBe(commandOf(local));
  });

  it('a row that names an image keeps it; its own command is not wrapped', () => {
    const task = load({ docker_image: 'my/image:1', test_cmd: 'pytest {tests}' });
    expect(inDocker(task)).toBe(task);
    expect(task.environment).toMatchObject({ kind: 'docker', image: 'my/image:1' });
    expect(commandOf(task)).toBe('pytest tests/a/tests.py');
  });

  it('a missing image is named, with the local build name looked for and the --image-map to use', async () => {
    const task = inDocker(load({ instance_id: 'django__django-15781' }));
    const remote = 'swebench/sweb.eval.x86_64.django_1776_django-15781:latest';
    const looked: string[] = [];
    const none = async (image: string) => {
      looked.push(image);
      return false;
    };
    const missing = await instanceImageProblem(task, new ImageMap(), none);
    expect(looked).toEqual([remote, 'sweb.eval.x86_64.django__django-15781:latest']);
    expect(missing.problem?.message).toContain(`${remote} is not on this Docker engine`);
    expect(missing.problem?.message).toContain(`--image-map ${remote}=<image>`);
    const noEngine = await instanceImageProblem(task, new ImageMap(), undefined);
    expect(noEngine.problem?.message).toContain('no Docker engine answers');
    // Mapped, present, or present under the local build's name: no problem.
    expect((await instanceImageProblem(task, new ImageMap([[remote, 'x:1']]), none)).problem).toBeUndefined();
    expect((await instanceImageProblem(task, new ImageMap(), async () => true)).task).toBe(task);
    const localBuild = await instanceImageProblem(
      task,
      new ImageMap(),
      async (i) => !i.startsWith('swebench/'),
    );
    expect(localBuild.problem).toBeUndefined();
    expect(localBuild.task.environment).toMatchObject({
      image: 'sweb.eval.x86_64.django__django-15781:latest',
    });
  });
});

describe.skipIf(!hasData)('the shared SWE-bench data gets the harness commands', () => {
  const folder = join(dataDir, 'swebench');

  /** Every row of a file, each loaded on its own (dev-easy repeats an id, which loadSwebench refuses). */
  async function rowsOf(file: string): Promise<Task[]> {
    return (await readRowFile(file)).map(rowToTask);
  }

  /** The harness's rule, written out independently: `diff --git a/.* b/(.*)`, minus NON_TEST_EXTS. */
  function directives(testPatch: string): string[] {
    const skip = ['.json', '.png', 'csv', '.txt', '.md', '.jpg', '.jpeg', '.pkl', '.yml', '.yaml', '.toml'];
    return [...testPatch.matchAll(/diff --git a\/.* b\/(.*)/g)]
      .map((m) => m[1] as string)
      .filter((p) => !skip.some((e) => p.endsWith(e)));
  }

  it('lite-test: exact commands for django, sympy, pytest and scikit-learn rows', async () => {
    const tasks = await loadSwebench(join(folder, 'swe-bench-lite-test.json'));
    const byId = new Map(tasks.map((t) => [t.name, commandOf(t)]));
    expect(Object.fromEntries(byId)).toEqual({
      'django__django-16255':
        './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 sitemaps_tests.test_http sitemaps_tests.urls.http',
      'sympy__sympy-13031':
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/matrices/tests/test_sparse.py",
      'pytest-dev__pytest-11143': 'pytest -rA testing/test_assertrewrite.py',
      'scikit-learn__scikit-learn-13584': 'pytest -rA sklearn/utils/tests/test_pprint.py',
      'django__django-15781':
        './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 user_commands.tests',
    });
    const parsers = tasks.map((t) => (t.verifier.kind === 'swebench' ? t.verifier.parser : undefined));
    expect(parsers).toEqual(['django', 'sympy', 'pytest', 'pytest', 'django']);
    for (const task of tasks) {
      // No snapshot and no --repos: the mirror is what is missing, not the test command.
      const problems = await localRunProblems(task);
      expect(problems.map((p) => p.field)).toEqual(['dockerless.files']);
      expect(problems[0]?.message).toContain(
        `pass --repos DIR holding a git mirror of ${task.metadata.repo}`,
      );
    }
  });

  it('every row of the four files gets the harness command: test_cmd + directives', async () => {
    const files = [
      join(folder, 'swe-bench-lite-test.json'),
      join(folder, 'swe-bench-dev-easy.json'),
      ...(await readdir(join(folder, 'verified-config'))).map((f) => join(folder, 'verified-config', f)),
    ];
    let rows = 0;
    for (const file of files) {
      const raw = JSON.parse(await readFile(file, 'utf8')) as unknown;
      const originals = (Array.isArray(raw) ? raw : [raw]) as Array<Record<string, string>>;
      const tasks = await rowsOf(file);
      expect(tasks).toHaveLength(originals.length);
      tasks.forEach((task, i) => {
        const original = originals[i] as Record<string, string>;
        const spec = harnessSpec(original.repo as string, original.version as string);
        expect(spec, `${original.instance_id}: ${original.repo} ${original.version}`).toBeDefined();
        let labels = directives(original.test_patch as string);
        if (original.repo === 'django/django')
          labels = labels.map((d) =>
            d
              .replace(/\.py$/, '')
              .replace(/^tests\//, '')
              .replaceAll('/', '.'),
          );
        expect(commandOf(task)).toBe([spec?.testCmd, ...labels].join(' '));
        rows++;
      });
    }
    expect(rows).toBe(18);
  });

  it('verified-config: astropy 1.3 uses the old astropy command, pytest 5.4 pytest -rA', async () => {
    const tasks = await loadSwebench(join(folder, 'verified-config'));
    const byId = new Map(tasks.map((t) => [t.name, commandOf(t)]));
    expect(byId.get('astropy__astropy-7606')).toBe(
      'pytest -rA -vv -o console_output_style=classic --tb=no astropy/units/tests/test_units.py',
    );
    expect(byId.get('pytest-dev__pytest-7324')).toBe('pytest -rA testing/test_mark_expression.py');
    expect(byId.get('django__django-11095')).toBe(
      './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 generic_inline_admin.tests',
    );
  });

  it('an edited copy with an unknown version is refused naming the line and field', async () => {
    const rows = JSON.parse(await readFile(join(folder, 'swe-bench-lite-test.json'), 'utf8')) as Array<
      Record<string, unknown>
    >;
    (rows[1] as Record<string, unknown>).version = '0.1';
    const file = join(await temp.make('berth-specs-'), 'lite.json');
    await writeFile(file, JSON.stringify(rows));
    await expect(loadSwebench(file)).rejects.toThrow(/:1: \[1\]\.version.*sympy\/sympy version "0\.1"/);
  });

  it('berth run --env docker on Lite stops before any trial, naming each instance image and the --image-map', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const jobs = await temp.make('berth-specs-jobs-');
    const run = spawnSync(
      'node',
      [
        join(root, 'bin', 'berth.js'),
        'run',
        '-p',
        join(folder, 'swe-bench-lite-test.json'),
        '--env',
        'docker',
        '--jobs-dir',
        jobs,
      ],
      { encoding: 'utf8', env: { ...process.env, CI: '1' } },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('5 problem(s) prevent the run; nothing was started');
    const remote = 'swebench/sweb.eval.x86_64.sympy_1776_sympy-13031:latest';
    expect(run.stderr).toContain(`sympy__sympy-13031: the SWE-bench instance image ${remote}`);
    expect(run.stderr).toContain('sweb.eval.x86_64.sympy__sympy-13031:latest');
    expect(run.stderr).toContain(`--image-map ${remote}=<image>`);
    expect(run.stderr).not.toContain('no test command');
    expect(await readdir(jobs)).toEqual([]);
  });
});
