import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createdModules,
  importableScript,
  importRoots,
  readImportable,
  scanPatch,
  sectionedConfigsIn,
} from '../../src/verifiers/tampering/patch-scan.ts';
import { dataDir, hasData } from '../helpers/data.ts';
import { makeDiff } from '../helpers/diff.ts';

const kinds = (
  patch: string,
  text: Record<string, string> = {},
  importable?: Parameters<typeof scanPatch>[2],
) => scanPatch(patch, text, importable).map((f) => `${f.kind}:${f.paths?.[0]}`);

describe('scanPatch', () => {
  it('flags any conftest.py, created or changed, and pytest.ini', async () => {
    expect(kinds(await makeDiff({}, { 'tests/conftest.py': 'x = 1\n', 'pytest.ini': '[pytest]\n' }))).toEqual(
      ['runner-config:pytest.ini', 'runner-plugin:tests/conftest.py'],
    );
    expect(kinds(await makeDiff({ 'conftest.py': 'a = 1\n' }, { 'conftest.py': 'a = 2\n' }))).toEqual([
      'runner-plugin:conftest.py',
    ]);
  });

  it('flags pytest 9 settings files pytest.toml and .pytest.toml, created or changed', async () => {
    expect(
      kinds(
        await makeDiff(
          { '.pytest.toml': '[pytest]\n' },
          { 'pytest.toml': '[pytest]\naddopts = ["-p", "x"]\n', '.pytest.toml': '[pytest]\nx = 1\n' },
        ),
      ).sort(),
    ).toEqual(['runner-config:.pytest.toml', 'runner-config:pytest.toml']);
  });

  it('flags shadows the patch creates, not changes to existing files of the repository (pytest itself)', async () => {
    const created = await makeDiff(
      {},
      {
        'pytest.py': 'x',
        'sitecustomize.py': 'x',
        'src/_pytest/hack.py': 'x',
        'evil.pth': 'import os',
        'pytest.pyc': 'x',
        'pytest.cpython-311-x86_64-linux-gnu.so': 'x',
      },
    );
    expect(kinds(created).sort()).toEqual(
      [
        'runner-shadow:evil.pth',
        'runner-shadow:pytest.cpython-311-x86_64-linux-gnu.so',
        'runner-shadow:pytest.py',
        'runner-shadow:pytest.pyc',
        'runner-shadow:sitecustomize.py',
        'runner-shadow:src/_pytest/hack.py',
      ].sort(),
    );
    const pytestRepo = await makeDiff(
      { 'src/_pytest/terminal.py': 'a = 1\n' },
      { 'src/_pytest/terminal.py': 'a = 2\n' },
    );
    expect(kinds(pytestRepo)).toEqual([]);
  });

  it('flags a module at the top of the repository named like a standard-library module, not one in a package', async () => {
    const created = await makeDiff(
      {},
      {
        'logging.py': 'x',
        'subprocess/__init__.py': 'x',
        'decimal.cpython-311-x86_64-linux-gnu.so': 'x',
        'src/mypkg/logging.py': 'x',
        'mypkg/logging.py': 'x',
        'test/__init__.py': 'x',
        'notes.py': 'x',
      },
    );
    expect(kinds(created).sort()).toEqual(
      [
        'runner-shadow:decimal.cpython-311-x86_64-linux-gnu.so',
        'runner-shadow:logging.py',
        'runner-shadow:subprocess/__init__.py',
      ].sort(),
    );
  });

  it("flags a created top-level module the environment's python imports from outside the repository (breaker9)", async () => {
    const patch = await makeDiff(
      { 'pygments.py': 'old\n' },
      {
        'pygments.py': 'new\n',
        'iniconfig.py': 'x',
        'src/packaging/__init__.py': 'x',
        'intervals/iniconfig.py': 'x',
        'tests/__init__.py': 'x',
        'helpers.py': 'x',
      },
    );
    const roots = importRoots('PYTHONPATH=./src:/opt/x:$PWD/lib python -m pytest tests');
    expect(roots).toEqual(['', 'src']);
    // Asked about whatever folder they are in: which folders count is known once the
    // environment resolved the test run's PYTHONPATH.
    expect(createdModules(patch).sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual([
      { name: 'helpers', top: true },
      // Created at the top (iniconfig.py) and deeper (intervals/iniconfig.py): at the top.
      { name: 'iniconfig', top: true },
      { name: 'packaging', top: false },
    ]);
    const names = new Set(['iniconfig', 'packaging', 'pygments', 'tests', 'attr']);
    // A changed module already shadowed before the patch (the repository's own): not flagged.
    expect(kinds(patch, {}, { names, roots }).sort()).toEqual([
      'runner-shadow:iniconfig.py',
      'runner-shadow:src/packaging/__init__.py',
    ]);
    expect(kinds(patch, {}, { names: new Set(), roots })).toEqual([]);
  });

  it("asks a real python which names it imports from outside the repository, never the repository's own", () => {
    const repo = mkdtempSync(join(tmpdir(), 'berth-importable-'));
    try {
      mkdirSync(join(repo, 'mypkg_berth'));
      writeFileSync(join(repo, 'mypkg_berth', '__init__.py'), '');
      writeFileSync(join(repo, 'json.py'), '');
      const mark = '@@mark@@';
      const script = `echo before-${mark}\n${importableScript(
        ['json', 'sys', 'mypkg_berth', 'no_such_module_berth'].map((name) => ({ name, top: true })),
        mark,
      )}\necho after`;
      const out = execFileSync('sh', ['-c', script], {
        cwd: repo,
        env: { ...process.env, PYTHONPATH: repo },
        timeout: 60_000,
      }).toString();
      const rest = out.slice(out.indexOf('\n') + 1);
      const read = readImportable(rest, mark);
      expect([...read.names].sort()).toEqual(['json', 'sys']);
      expect(read.roots).toEqual(['']);
      expect(read.rest).toBe('after\n');
      expect(importableScript([], mark)).toBe('');
      // The test command's PYTHONPATH, as its shell expands it there: absolute, $PWD, $(pwd),
      // another variable; folders outside the repository are no roots of it (trust19).
      mkdirSync(join(repo, 'lib', 'deep'), { recursive: true });
      const command = `PYTHONPATH="$PWD/lib":$(pwd)/lib/deep:${repo}/src:/opt:$BERTH_T_DIR python3 -m pytest {tests}`;
      const expanded = execFileSync(
        'sh',
        ['-c', importableScript([{ name: 'json', top: false }], mark, command)],
        {
          cwd: repo,
          env: { ...process.env, PYTHONPATH: '', BERTH_T_DIR: join(repo, 'vendor') },
          timeout: 60_000,
        },
      ).toString();
      expect(readImportable(expanded, mark).roots.sort()).toEqual(['lib', 'lib/deep', 'src', 'vendor']);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('runs no python when no created module can be on sys.path (empty PYTHONPATH, none at the top): issue 18', (ctx) => {
    const python = ['/usr/bin/python3', '/bin/python3'].find((p) => existsSync(p));
    if (!python) return ctx.skip('no /usr/bin/python3 to stand behind the counting shim');
    const dir = mkdtempSync(join(tmpdir(), 'berth-importable-gate-'));
    try {
      const repo = join(dir, 'repo');
      const bin = join(dir, 'bin');
      mkdirSync(repo);
      mkdirSync(bin);
      // A python that counts its runs, then is the real one.
      const calls = join(dir, 'calls');
      writeFileSync(join(bin, 'python'), `#!/bin/sh\necho x >> '${calls}'\nexec ${python} "$@"\n`);
      chmodSync(join(bin, 'python'), 0o755);
      const mark = '@@gate@@';
      const run = (modules: Parameters<typeof importableScript>[0], command: string, pythonPath: string) => {
        const out = execFileSync('sh', ['-c', importableScript(modules, mark, command)], {
          cwd: repo,
          env: { ...process.env, PATH: `${bin}:/usr/bin:/bin`, PYTHONPATH: pythonPath },
          timeout: 60_000,
        }).toString();
        const count = existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').length - 1 : 0;
        rmSync(calls, { force: true });
        return { read: readImportable(out, mark), count };
      };
      const deep = [
        { name: 'json', top: false },
        { name: 'iniconfig_no_such', top: false },
      ];
      // Deep modules only, nothing on PYTHONPATH: no python, nothing shadowed.
      const none = run(deep, 'python3 -m pytest tests', '');
      expect(none.count).toBe(0);
      expect([...none.read.names]).toEqual([]);
      expect(none.read.rest).toBe('');
      // The control: the same modules under a PYTHONPATH (the environment's, or the command's
      // after expansion, or a plain relative entry of its text) are asked about.
      for (const [command, pythonPath] of [
        ['python3 -m pytest tests', 'lib'],
        ['PYTHONPATH="$PWD/lib" python3 -m pytest tests', ''],
        ['PYTHONPATH=src python3 -m pytest tests', ''],
      ] as const) {
        const some = run(deep, command, pythonPath);
        expect(some.count).toBe(1);
        expect([...some.read.names]).toEqual(['json']);
      }
      // A module at the top is asked about with nothing on PYTHONPATH; a deep one beside it is not.
      const top = run(
        [
          { name: 'json', top: true },
          { name: 'sys', top: false },
        ],
        'python3 -m pytest',
        '',
      );
      expect(top.count).toBe(1);
      expect([...top.read.names]).toEqual(['json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the interpreter a shim ran before instead of the shim, unless a version file or another python decides: issue 18', (ctx) => {
    const python = ['/usr/bin/python3', '/bin/python3'].find((p) => existsSync(p));
    if (!python) return ctx.skip('no /usr/bin/python3 to stand behind the counting shim');
    const dir = mkdtempSync(join(tmpdir(), 'berth-importable-shim-'));
    try {
      const repo = join(dir, 'repo');
      const shims = join(dir, 'shims');
      const other = join(dir, 'other');
      mkdirSync(repo);
      mkdirSync(shims);
      mkdirSync(other);
      const calls = join(dir, 'calls');
      // A shim as pyenv's: a script that runs the real interpreter by its path.
      writeFileSync(join(shims, 'python'), `#!/bin/sh\necho x >> '${calls}'\nexec ${python} "$@"\n`);
      chmodSync(join(shims, 'python'), 0o755);
      const mark = '@@shim@@';
      const modules = [{ name: 'json', top: true }];
      const run = (known: Parameters<typeof importableScript>[3], path = `${shims}:/usr/bin:/bin`) => {
        const out = execFileSync('sh', ['-c', importableScript(modules, mark, 'python -m pytest', known)], {
          cwd: repo,
          env: { ...process.env, PATH: path, PYTHONPATH: '' },
          timeout: 60_000,
        }).toString();
        const count = existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').length - 1 : 0;
        rmSync(calls, { force: true });
        return { read: readImportable(out, mark), count };
      };
      const first = run(undefined);
      expect(first.count).toBe(1);
      expect([...first.read.names]).toEqual(['json']);
      const known = first.read.python;
      expect(known?.found).toBe(join(shims, 'python'));
      expect(known?.executable).toBe(
        execFileSync(python, ['-c', 'import sys; print(sys.executable)']).toString().trim(),
      );
      // Known: the shim does not run, the answer is the same.
      const again = run(known);
      expect(again.count).toBe(0);
      expect([...again.read.names]).toEqual(['json']);
      expect(again.read.python).toEqual(known);
      // Another python first on PATH: the candidates as before (it answers).
      writeFileSync(join(other, 'python'), `#!/bin/sh\necho other >> '${calls}'\nexec ${python} "$@"\n`);
      chmodSync(join(other, 'python'), 0o755);
      const moved = run(known, `${other}:${shims}:/usr/bin:/bin`);
      expect(moved.count).toBe(1);
      expect(moved.read.python?.found).toBe(join(other, 'python'));
      // A version file in the repository or above it: the shim decides, and nothing is remembered.
      for (const at of [join(repo, '.python-version'), join(dir, '.tool-versions')]) {
        writeFileSync(at, '3.11\n');
        const pinned = run(known);
        expect(pinned.count).toBe(1);
        expect([...pinned.read.names]).toEqual(['json']);
        expect(pinned.read.python).toBeUndefined();
        rmSync(at);
      }
      // A dangling link by that name counts too (never followed, never read).
      symlinkSync(join(dir, 'no-such-file'), join(repo, '.python-version'));
      expect(run(known).count).toBe(1);
      rmSync(join(repo, '.python-version'));
      // A folder of the repository on PYTHONPATH whose name holds a newline is no root, and no
      // line of the answer can pass for the interpreter's.
      mkdirSync(join(repo, 'lib\nevil'));
      const odd = execFileSync('sh', ['-c', importableScript(modules, mark, 'python -m pytest')], {
        cwd: repo,
        env: { ...process.env, PATH: `${shims}:/usr/bin:/bin`, PYTHONPATH: join(repo, 'lib\nevil') },
        timeout: 60_000,
      }).toString();
      rmSync(calls, { force: true });
      expect(readImportable(odd, mark).roots).toEqual([]);
      expect(readImportable(odd, mark).python).toEqual(known);
      expect(readImportable(odd.replace(`${mark}\n`, `${mark}\njson\n`), mark).python).toBeUndefined();
      // A remembered interpreter that is gone: the shim runs.
      const gone = run({ found: join(shims, 'python'), executable: join(dir, 'no-such-python') });
      expect(gone.count).toBe(1);
      expect([...gone.read.names]).toEqual(['json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("flags a created module in a folder the test run's PYTHONPATH names ($PWD/lib, absolute: trust19)", async () => {
    const patch = await makeDiff({}, { 'lib/iniconfig.py': 'x', 'pkg/iniconfig.py': 'x' });
    const names = new Set(['iniconfig']);
    expect(kinds(patch, {}, { names, roots: [''] })).toEqual([]);
    expect(kinds(patch, {}, { names, roots: ['', 'lib'] })).toEqual(['runner-shadow:lib/iniconfig.py']);
  });

  it('flags distribution metadata and pytest11 entry points', async () => {
    const patch = await makeDiff(
      { 'setup.py': 'setup(name="x")\n' },
      {
        'x.egg-info/entry_points.txt': '[pytest11]\nx = x.plugin\n',
        'setup.py': 'setup(name="x", entry_points={"pytest11": ["x = x.plugin"]})\n',
      },
    );
    expect(kinds(patch)).toEqual(['runner-plugin:setup.py', 'runner-plugin:x.egg-info/entry_points.txt']);
  });

  it('places changed lines of setup.cfg, tox.ini and pyproject.toml in their sections', async () => {
    const before = {
      'setup.cfg':
        '[metadata]\nname = x\n\n[tool:pytest]\nmarkers =\n    slow: slow tests\ntestpaths = tests\n',
    };
    const markers = await makeDiff(before, {
      'setup.cfg': `${before['setup.cfg'].replace('slow: slow tests\n', 'slow: slow tests\n    net: needs network\n')}`,
    });
    const after = {
      'setup.cfg': before['setup.cfg'].replace(
        'slow: slow tests\n',
        'slow: slow tests\n    net: needs network\n',
      ),
    };
    expect(sectionedConfigsIn(markers)).toEqual(['setup.cfg']);
    // A marker added under `markers =` is what fixes do: allowed.
    expect(kinds(markers, after)).toEqual([]);
    const metadata = { 'setup.cfg': before['setup.cfg'].replace('name = x', 'name = y') };
    expect(kinds(await makeDiff(before, metadata), metadata)).toEqual([]);
    const addopts = { 'setup.cfg': `${before['setup.cfg']}addopts = -p x.plugin\n` };
    const found = scanPatch(await makeDiff(before, addopts), addopts);
    expect(found.map((f) => f.kind)).toEqual(['runner-config']);
    expect(found[0]?.message).toContain('+addopts = -p x.plugin');
    // Without the text after the patch, a line that names a pytest key still counts.
    expect(kinds(await makeDiff(before, addopts))).toEqual(['runner-config:setup.cfg']);
    // The same diff with `z/` for `a/` and `b/` (`git apply` strips any first component): its
    // lines are still read (breaker10 F4; the library's reading keyed them by `a/`/`b/` only).
    const zPrefixed = (await makeDiff(before, addopts))
      .replace(
        /^(diff --git |--- |\+\+\+ )a\/(.*?)( b\/|$)/gm,
        (_m, head: string, rest: string, tail: string) => `${head}z/${rest}${tail ? ' z/' : ''}`,
      )
      .replace(/^\+\+\+ b\//m, '+++ z/');
    expect(zPrefixed).toContain('--- z/setup.cfg');
    expect(zPrefixed).toContain('+++ z/setup.cfg');
    const zFound = scanPatch(zPrefixed, addopts);
    expect(zFound.map((f) => f.kind)).toEqual(['runner-config']);
    expect(zFound[0]?.message).toContain('+addopts = -p x.plugin');

    const toml = { 'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n' };
    const tomlAfter = { 'pyproject.toml': toml['pyproject.toml'].replace('"-q"', '"-q -p x.plugin"') };
    expect(kinds(await makeDiff(toml, tomlAfter), tomlAfter)).toEqual(['runner-config:pyproject.toml']);
    const tomlProject = {
      'pyproject.toml': toml['pyproject.toml'].replace('name = "x"', 'name = "x"\nversion = "2"'),
    };
    expect(kinds(await makeDiff(toml, tomlProject), tomlProject)).toEqual([]);
  });

  it("reads a git binary literal's content, and refuses binary data it cannot read but for pictures and fonts (breaker12 F4)", () => {
    // A real repository whose .gitattributes makes git write these files as binary patches.
    const dir = mkdtempSync(join(tmpdir(), 'berth-binary-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
        cwd: dir,
        encoding: 'utf8',
      });
    try {
      git('init', '-q');
      writeFileSync(join(dir, '.gitattributes'), 'setup.cfg binary\n*.py binary\n');
      writeFileSync(join(dir, 'tool.py'), `x = 1\n${'# filler\n'.repeat(200)}`);
      git('add', '-A');
      git('commit', '-qm', 'base');
      const addopts = '[tool:pytest]\naddopts = -p x.plugin\n';
      writeFileSync(join(dir, 'setup.cfg'), addopts);
      writeFileSync(join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
      git('add', '-A');
      const literal = git('diff', '--cached', '--binary');
      expect(literal).toContain('GIT binary patch\nliteral ');
      // The literal is decoded and its lines placed in their section: addopts is pytest's.
      const found = scanPatch(literal, { 'setup.cfg': addopts });
      expect(found.map((f) => `${f.kind}:${f.paths?.[0]}`)).toEqual(['runner-config:setup.cfg']);
      expect(found[0]?.message).toContain('addopts = -p x.plugin');
      // Without --binary git writes no data ("Binary files differ"): unreadable, refused; the picture is not.
      expect(kinds(git('diff', '--cached'))).toEqual(['runner-config:setup.cfg']);
      // A change to a file git writes as a delta against its old content: unreadable, refused.
      git('commit', '-qm', 'next');
      writeFileSync(join(dir, 'tool.py'), `x = 2\n${'# filler\n'.repeat(200)}`);
      git('add', '-A');
      const delta = git('diff', '--cached', '--binary');
      expect(delta).toMatch(/GIT binary patch\ndelta /);
      expect(kinds(delta)).toEqual(['runner-config:tool.py']);
      // A literal of ordinary code is read like any added lines: nothing to flag.
      writeFileSync(join(dir, 'other.py'), 'def f():\n    return 1\n');
      git('add', '-A');
      expect(kinds(git('diff', '--cached', '--binary', '--', 'other.py'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('flags a created top-level package Python or pytest looks for at start-up and finds nowhere, even with no __init__.py (breaker13 F2)', async () => {
    const base = { 'pkg/__init__.py': '' };
    const orgPackage = await makeDiff(base, {
      'org/__init__.py': 'x = 1\n',
      'org/python/core.py': 'y = 1\n',
    });
    expect(kinds(orgPackage)).toContain('runner-shadow:org/__init__.py');
    // A namespace package: no __init__.py anywhere, still imported by `from org.python.core import ...`.
    expect(kinds(await makeDiff(base, { 'org/python/core.py': 'y = 1\n' }))).toEqual([
      'runner-shadow:org/python/core.py',
    ]);
    expect(kinds(await makeDiff(base, { 'msvcrt.py': 'z = 1\n' }))).toEqual(['runner-shadow:msvcrt.py']);
    // Under a folder the test run puts on sys.path; not inside a package of the repository.
    const src = await makeDiff(base, { 'src/org/python/core.py': 'y = 1\n' });
    expect(kinds(src, {}, { names: new Set(), roots: ['', 'src'] })).toEqual([
      'runner-shadow:src/org/python/core.py',
    ]);
    expect(kinds(await makeDiff(base, { 'pkg/org/core.py': 'y = 1\n' }))).toEqual([]);
  });

  it('flags a settings file the patch makes a link (breaker13 F3)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-config-link-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
        cwd: dir,
        encoding: 'utf8',
      });
    try {
      git('init', '-q');
      writeFileSync(join(dir, 'README'), 'x\n');
      git('add', '-A');
      git('commit', '-qm', 'base');
      mkdirSync(join(dir, 'docs'));
      writeFileSync(join(dir, 'docs', 'settings.txt'), '[pytest]\naddopts = -p pkg._compat\n');
      execFileSync('ln', ['-s', 'docs/settings.txt', join(dir, 'tox.ini')]);
      git('add', '-A');
      expect(kinds(git('diff', '--cached'))).toEqual(['runner-config:tox.ini']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads pytest settings as pytest does: other line breaks, TOML dotted keys and spaced headers (breaker13 F4, F5)', async () => {
    // Form feeds: pytest's ini reader (str.splitlines) sees [pytest] and addopts lines here.
    const ff = { 'tox.ini': '# settings for tox\f[pytest]\faddopts = -p pkg._compat\n' };
    expect(kinds(await makeDiff({}, ff), ff)).toEqual(['runner-config:tox.ini']);
    const cr = { 'setup.cfg': '# notes\r[tool:pytest]\raddopts = -p pkg._compat\n' };
    expect(kinds(await makeDiff({}, cr), cr)).toEqual(['runner-config:setup.cfg']);
    // CRLF is one line break, read as such: a harmless marker change passes.
    const crlfBefore = { 'setup.cfg': '[tool:pytest]\r\nmarkers =\r\n    slow: slow\r\n' };
    const crlfAfter = { 'setup.cfg': '[tool:pytest]\r\nmarkers =\r\n    slow: slow\r\n    net: net\r\n' };
    expect(kinds(await makeDiff(crlfBefore, crlfAfter), crlfAfter)).toEqual([]);
    // TOML: a dotted key under [tool], one at the top, an inline table, a header with spaces.
    const project = '[project]\nname = "x"\n';
    for (const added of [
      '[tool]\npytest.ini_options.addopts = "-p pkg._compat"\n',
      'tool.pytest.ini_options.addopts = "-p pkg._compat"\n',
      '[tool]\npytest = { ini_options = { addopts = "-p pkg._compat" } }\n',
      '[ tool . pytest . ini_options ]\naddopts = "-p pkg._compat"\n',
    ]) {
      const after = {
        'pyproject.toml': added.startsWith('[') ? `${project}\n${added}` : `${added}${project}`,
      };
      expect(kinds(await makeDiff({ 'pyproject.toml': project }, after), after), added).toEqual([
        'runner-config:pyproject.toml',
      ]);
    }
    // pytest named in the project's own dependencies is no setting.
    const deps = { 'pyproject.toml': `${project}dependencies = ["pytest>=7"]\n` };
    expect(kinds(await makeDiff({ 'pyproject.toml': project }, deps), deps)).toEqual([]);
  });

  it('flags JavaScript runner configuration, node_modules and test settings of package.json', async () => {
    const patch = await makeDiff(
      { 'package.json': '{\n  "name": "x",\n  "version": "1.0.0"\n}\n' },
      {
        'jest.config.js': 'module.exports = {};\n',
        'node_modules/assert/index.js': 'module.exports = () => {};\n',
        'package.json': '{\n  "name": "x",\n  "version": "1.0.0",\n  "mocha": { "require": "x" }\n}\n',
        '.npmrc': 'node-options=--import ./x.mjs\n',
      },
    );
    expect(kinds(patch).sort()).toEqual(
      [
        'runner-config:.npmrc',
        'runner-config:jest.config.js',
        'runner-config:package.json',
        'runner-shadow:node_modules/assert/index.js',
      ].sort(),
    );
    // For a verifier that resets the settings a fix may change too (the multilingual one): they
    // come without a veto, said reset; node_modules still refuses.
    const reset = scanPatch(patch, {}, undefined, { resetJsRunnerConfig: true });
    expect(reset.map((f) => `${f.veto ? 'veto' : 'reset'} ${f.kind}:${f.paths?.[0]}`).sort()).toEqual([
      'reset runner-config:.npmrc',
      'reset runner-config:jest.config.js',
      'reset runner-config:package.json',
      'veto runner-shadow:node_modules/assert/index.js',
    ]);
    for (const f of reset.filter((f) => !f.veto))
      expect(f.message).toMatch(/\(reset to the base: the tests ran without it\)$/);
    const version = await makeDiff(
      { 'package.json': '{\n  "version": "1.0.0"\n}\n' },
      { 'package.json': '{\n  "version": "1.0.1"\n}\n' },
    );
    expect(kinds(version)).toEqual([]);
  });

  it("reads package.json by its keys: a fix's version bumps and engines pass, scripts, runner settings and local packages do not (trust19)", async () => {
    // npm/node-semver's own package.json, shortened, before and after its fix commits.
    const base = `${JSON.stringify(
      {
        name: 'semver',
        version: '7.5.1',
        scripts: { test: 'tap', snap: 'tap' },
        devDependencies: { '@npmcli/eslint-config': '^4.0.0', tap: '^16.0.0' },
        tap: {
          'check-coverage': true,
          'coverage-map': 'map.js',
          'nyc-arg': ['--exclude', 'tap-snapshots/**'],
        },
        engines: { node: '>=10' },
      },
      null,
      2,
    )}\n`;
    interface Pkg {
      scripts: Record<string, string>;
      dependencies?: Record<string, string>;
      devDependencies: Record<string, string>;
      tap: Record<string, unknown>;
      engines: Record<string, string>;
      overrides?: Record<string, string>;
    }
    const edit = (f: (p: Pkg) => void) => {
      const p = JSON.parse(base) as Pkg;
      f(p);
      return `${JSON.stringify(p, null, 2)}\n`;
    };
    const scan = async (after: string) => {
      const patch = await makeDiff({ 'package.json': base }, { 'package.json': after });
      expect(sectionedConfigsIn(patch)).toEqual(['package.json']);
      return scanPatch(patch, { 'package.json': after }).map((f) => f.message);
    };
    // 60cbb3f "deps: tap@16.0.0", ad8ff11 "fix: use internal cache implementation" (a dependency
    // added), 717534e "fix: better handling of whitespace" (tap's check-coverage for a timeout),
    // 85b269a "fix: allow node >=10": a fix's business.
    expect(await scan(edit((p) => (p.devDependencies.tap = '^16.3.0')))).toEqual([]);
    expect(await scan(edit((p) => (p.dependencies = { 'lru-cache': '^6.0.0' })))).toEqual([]);
    expect(
      await scan(
        edit((p) => {
          delete p.tap['check-coverage'];
          p.tap.timeout = 30;
        }),
      ),
    ).toEqual([]);
    expect(await scan(edit((p) => (p.engines.node = '>=12')))).toEqual([]);
    // The line check alone (no text after the patch) refused the tap bump.
    const bump = await makeDiff(
      { 'package.json': base },
      { 'package.json': edit((p) => (p.devDependencies.tap = '^16.3.0')) },
    );
    expect(kinds(bump)).toEqual(['runner-config:package.json']);
    // Scripts, runner settings that decide what runs, and packages from anywhere but a registry.
    expect(await scan(edit((p) => (p.scripts.test = 'tap || true')))).toEqual([
      'the patch changes test settings in package.json: scripts.test',
    ]);
    expect(await scan(edit((p) => (p.tap['node-arg'] = ['--require', './x.js'])))).toEqual([
      'the patch changes test settings in package.json: tap.node-arg | "--require",',
    ]);
    expect(await scan(edit((p) => (p.devDependencies.tap = 'file:./tools/tap')))).toEqual([
      'the patch changes test settings in package.json: devDependencies.tap: "file:./tools/tap"',
    ]);
    expect(await scan(edit((p) => (p.overrides = { tap: 'npm:evil@1' })))).toEqual([
      'the patch changes test settings in package.json: overrides',
    ]);
    // A text that is no JSON: the changed lines are matched.
    expect(await scan(`${edit((p) => (p.devDependencies.tap = '^16.3.0'))},`)).toHaveLength(1);
  });

  it('ignores deleted files and ordinary code', async () => {
    const patch = await makeDiff(
      { 'conftest.py': 'x', 'lib/a.py': 'a = 1\n' },
      { 'conftest.py': null, 'lib/a.py': 'a = 2\n' },
    );
    expect(kinds(patch)).toEqual([]);
  });
});

describe.skipIf(!hasData)('scanPatch on real gold patches (no false alarm)', () => {
  it('finds nothing in the SWE-bench gold patches of the shared data', () => {
    const dir = join(dataDir, 'swebench');
    const rows: { instance_id: string; patch: string }[] = [
      ...JSON.parse(readFileSync(join(dir, 'swe-bench-lite-test.json'), 'utf8')),
      ...JSON.parse(readFileSync(join(dir, 'swe-bench-dev-easy.json'), 'utf8')),
      ...readdirSync(join(dir, 'verified-config')).map((f) =>
        JSON.parse(readFileSync(join(dir, 'verified-config', f), 'utf8')),
      ),
    ];
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) expect(scanPatch(row.patch), row.instance_id).toEqual([]);
  });
});

describe('scanPatch: code that reaches into the runner', () => {
  it('flags pytest internals, outcome functions and berth names added outside the tests', async () => {
    const patch = await makeDiff(
      {
        'pkg/a.py': 'x = 1\n',
        'pkg/b.py': 'y = 1\n',
        'tests/test_a.py': 'z = 1\n',
        'src/_pytest/runner.py': 'w = 1\n',
      },
      {
        'pkg/a.py': 'x = 1\nfrom _pytest.reports import TestReport\n',
        'pkg/b.py': 'y = 1\nimport pytest\npytest.xfail("later")\n',
        'tests/test_a.py': 'z = 1\nimport pytest\npytest.skip("slow")\n',
        'src/_pytest/runner.py': 'w = 1\nfrom _pytest.reports import TestReport\n',
      },
    );
    expect(kinds(patch)).toEqual(['runner-reference:pkg/a.py', 'runner-reference:pkg/b.py']);
  });

  it('leaves ordinary imports of pytest and words like pytest_plugins alone', async () => {
    const patch = await makeDiff(
      { 'pkg/a.py': 'x = 1\n' },
      { 'pkg/a.py': 'x = 1\n# run with pytest -k foo\nmy_pluggy_like = 2\nimport pytest_cov_helper\n' },
    );
    expect(kinds(patch)).toEqual([]);
  });
});
