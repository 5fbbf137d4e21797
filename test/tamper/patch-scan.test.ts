import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createdTopLevelModules,
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
    const roots = importRoots('PYTHONPATH=./src:/opt/x python -m pytest tests');
    expect(roots).toEqual(['', 'src']);
    expect(createdTopLevelModules(patch, roots).sort()).toEqual(['helpers', 'iniconfig', 'packaging']);
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
      const script = `echo before-${mark}\n${importableScript(['json', 'sys', 'mypkg_berth', 'no_such_module_berth'], mark)}\necho after`;
      const out = execFileSync('sh', ['-c', script], {
        cwd: repo,
        env: { ...process.env, PYTHONPATH: repo },
        timeout: 60_000,
      }).toString();
      const rest = out.slice(out.indexOf('\n') + 1);
      const read = readImportable(rest, mark);
      expect([...read.names].sort()).toEqual(['json', 'sys']);
      expect(read.rest).toBe('after\n');
      expect(importableScript([], mark)).toBe('');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
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

    const toml = { 'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n' };
    const tomlAfter = { 'pyproject.toml': toml['pyproject.toml'].replace('"-q"', '"-q -p x.plugin"') };
    expect(kinds(await makeDiff(toml, tomlAfter), tomlAfter)).toEqual(['runner-config:pyproject.toml']);
    const tomlProject = {
      'pyproject.toml': toml['pyproject.toml'].replace('name = "x"', 'name = "x"\nversion = "2"'),
    };
    expect(kinds(await makeDiff(toml, tomlProject), tomlProject)).toEqual([]);
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
    const version = await makeDiff(
      { 'package.json': '{\n  "version": "1.0.0"\n}\n' },
      { 'package.json': '{\n  "version": "1.0.1"\n}\n' },
    );
    expect(kinds(version)).toEqual([]);
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
