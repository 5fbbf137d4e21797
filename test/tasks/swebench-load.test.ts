import { readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { loadSwebench, testDirectives } from '../../src/tasks/swebench/load.ts';
import { readRowFile } from '../../src/tasks/swebench/read-rows.ts';
import { localRunProblems } from '../../src/tasks/swebench/runnable.ts';
import { dataDir, fixturesDir, hasData } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const mini = join(fixturesDir, 'swebench', 'mini.jsonl');

async function tempFile(name: string, content: string): Promise<string> {
  const dir = await temp.make('berth-load-');
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function loadError(path: string): Promise<InputError> {
  try {
    await loadSwebench(path);
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('expected an InputError');
}

describe('loadSwebench on the DockerLess fixture', () => {
  it('loads both rows with snapshot, commands and test lists', async () => {
    const tasks = await loadSwebench(mini);
    expect(tasks.map((t) => t.name)).toEqual(['mini__stats-1', 'mini__range-1']);
    const [py, js] = tasks;
    expect(py?.origin).toEqual({ file: mini, line: 1 });
    expect(js?.origin.line).toBe(2);
    if (py?.environment.kind !== 'local' || py.verifier.kind !== 'swebench')
      throw new Error('unexpected kinds');
    expect(Object.keys(py.environment.snapshot?.files ?? {}).sort()).toEqual([
      'mini/__init__.py',
      'mini/stats.py',
      'tests/__init__.py',
      'tests/test_stats.py',
    ]);
    expect(py.verifier.failToPass).toHaveLength(3);
    expect(py.verifier.passToPass).toHaveLength(3);
    expect(py.verifier.testCommand).toBe('python3 -m pytest -rA -p no:cacheprovider {tests}');
    expect(py.verifier.testFiles).toEqual(['tests/test_stats.py']);
    expect(py.solution.kind).toBe('patch');
    expect(py.metadata.repo).toBe('mini/stats');
    expect(await localRunProblems(py)).toEqual([]);
  });

  it('reads the same rows from a JSON list, an object keyed by id, single-row files and a folder', async () => {
    const rows = (await readFile(mini, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const expected = (await loadSwebench(mini)).map((t) => [t.name, t.verifier]);
    const list = await tempFile('list.json', JSON.stringify(rows, null, 2));
    const keyed = await tempFile(
      'keyed.json',
      JSON.stringify(Object.fromEntries(rows.map((r) => [r.instance_id, r]))),
    );
    const dir = await temp.make('berth-load-dir-');
    for (const row of rows) await writeFile(join(dir, `${row.instance_id}.json`), JSON.stringify(row));
    for (const path of [list, keyed, dir]) {
      const tasks = await loadSwebench(path);
      expect(tasks.map((t) => [t.name, t.verifier]).sort()).toEqual([...expected].sort());
    }
    // Lines of a pretty-printed list point at each row.
    const fromList = await loadSwebench(list);
    expect(fromList[0]?.origin.line).toBe(2);
    expect((fromList[1]?.origin.line ?? 0) > 2).toBe(true);
  });

  it('accepts the snapshot extension: binary files, symlinks, executables', async () => {
    const row = {
      instance_id: 'x__y-1',
      test_patch: '',
      FAIL_TO_PASS: "['t1']",
      PASS_TO_PASS: '[]',
      dockerless: {
        files: { 'run.sh': '#!/bin/sh\necho hi\n', 'README.md': 'hello' },
        binary_files: { 'data/blob.bin': Buffer.from([0, 1, 2, 255]).toString('base64') },
        symlinks: { 'docs/README': '../README.md' },
        executables: ['run.sh'],
        test_cmd: 'sh run.sh',
      },
    };
    const [task] = await loadSwebench(await tempFile('ext.jsonl', `${JSON.stringify(row)}\n`));
    if (task?.environment.kind !== 'local') throw new Error('expected local');
    expect(task.environment.snapshot).toEqual({
      files: row.dockerless.files,
      binaryFiles: row.dockerless.binary_files,
      symlinks: row.dockerless.symlinks,
      executables: ['run.sh'],
    });
  });
});

describe('loadSwebench on bad input', () => {
  const good = { instance_id: 'a__b-1', test_patch: '', FAIL_TO_PASS: [], PASS_TO_PASS: [] };

  it('names the file and line of an unparsable JSONL line', async () => {
    const path = await tempFile('bad.jsonl', `${JSON.stringify(good)}\n{"instance_id": "x",\n`);
    const error = await loadError(path);
    expect(error.location).toEqual({ file: path, line: 2 });
    expect(error.message).toContain(`${path}:2`);
    expect(error.exitCode).toBe(2);
  });

  it('names the line of a JSON syntax error', async () => {
    const path = await tempFile('bad.json', '[\n{"instance_id": "a"},\n{"instance_id": }\n]');
    expect((await loadError(path)).location.line).toBe(3);
  });

  it('names a missing field and a badly encoded test list', async () => {
    const { PASS_TO_PASS: _, ...missing } = good;
    const path = await tempFile(
      'missing.jsonl',
      `${JSON.stringify(good)}\n\n${JSON.stringify({ ...missing, instance_id: 'c__d-1' })}\n`,
    );
    expect((await loadError(path)).location).toEqual({ file: path, line: 3, field: 'PASS_TO_PASS' });
    const bad = await tempFile('badlist.jsonl', JSON.stringify({ ...good, FAIL_TO_PASS: "['unterminated" }));
    const error = await loadError(bad);
    expect(error.location.field).toBe('FAIL_TO_PASS');
    expect(error.message).toMatch(/unterminated string/);
  });

  it('rejects a duplicate instance_id naming both places', async () => {
    const path = await tempFile('dup.jsonl', `${JSON.stringify(good)}\n${JSON.stringify(good)}\n`);
    const error = await loadError(path);
    expect(error.location).toEqual({ file: path, line: 2, field: 'instance_id' });
    expect(error.message).toContain('first seen at');
  });

  it('rejects snapshot paths that escape the repository or write into .git', async () => {
    for (const path of ['../evil', '/etc/passwd', '.git/hooks/pre-commit', 'a/./b', 'sub/.git/config']) {
      const row = { ...good, dockerless: { files: { [path]: 'x' }, test_cmd: 'true' } };
      const error = await loadError(await tempFile('unsafe.jsonl', JSON.stringify(row)));
      expect(error.location.field).toBe(`dockerless.files[${JSON.stringify(path)}]`);
    }
    const symlink = { ...good, dockerless: { files: {}, symlinks: { l: '/etc/passwd' }, test_cmd: 'true' } };
    expect((await loadError(await tempFile('abs-link.jsonl', JSON.stringify(symlink)))).message).toMatch(
      /relative path/,
    );
    const binary = {
      ...good,
      dockerless: { files: {}, binary_files: { b: 'not base64!' }, test_cmd: 'true' },
    };
    expect((await loadError(await tempFile('b64.jsonl', JSON.stringify(binary)))).message).toMatch(
      /not base64/,
    );
  });
});

describe('loadSwebench lists every bad row, not only the first', () => {
  const examples = join(fixturesDir, '..', '..', 'examples', 'swe-dockerless.jsonl');
  const exampleRows = async () =>
    (await readFile(examples, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('the bundled DockerLess rows, broken four ways: every problem with its line and field', async () => {
    const [a, b, c, d] = await exampleRows();
    const { test_patch: _, ...noTestPatch } = a as Record<string, unknown>;
    const lines = [
      JSON.stringify(noTestPatch),
      JSON.stringify({ ...b, FAIL_TO_PASS: 42 }),
      '{"instance_id": "cut off',
      JSON.stringify(c),
      JSON.stringify(d),
      JSON.stringify({ ...c, dockerless: { ...(c?.dockerless as object), files: { '../x': '' } } }),
    ];
    const path = await tempFile('broken.jsonl', `${lines.join('\n')}\n`);
    const error = await loadError(path);
    expect(error.exitCode).toBe(2);
    expect(error.issues.map((issue) => [issue.line, issue.field])).toEqual([
      [1, 'test_patch'],
      [2, 'FAIL_TO_PASS'],
      [3, undefined],
      [6, 'dockerless.files["../x"]'],
    ]);
    const message = error.message.split('\n');
    expect(message[0]).toBe(`${path}: 4 problems:`);
    expect(message[1]).toBe(`  ${path}:1: test_patch: missing required field`);
    expect(message[3]).toMatch(new RegExp(`^  ${path}:3: not a valid JSON line`));
    expect(message).toHaveLength(5);
  });

  it('a duplicate id and a bad row in two files of a folder: both, the header counting the files', async () => {
    const [a, b] = await exampleRows();
    const dir = await temp.make('berth-load-');
    await writeFile(
      join(dir, '1.jsonl'),
      `${JSON.stringify(a)}\n${JSON.stringify({ ...b, PASS_TO_PASS: {} })}\n`,
    );
    await writeFile(join(dir, '2.json'), JSON.stringify([b, a], null, 2));
    const error = await loadError(dir);
    expect(error.issues.map((issue) => [issue.file, issue.line, issue.field])).toEqual([
      [join(dir, '1.jsonl'), 2, 'PASS_TO_PASS'],
      [join(dir, '2.json'), expect.any(Number), '[1].instance_id'],
    ]);
    expect(error.issues[1]?.message).toContain(`first seen at ${join(dir, '1.jsonl')}:1`);
    expect(error.message.split('\n')[0]).toBe('2 problems in 2 files:');
  });

  it('30 bad rows: the message lists 20 and counts the rest; `issues` holds all 30', async () => {
    const [a] = await exampleRows();
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({ ...a, instance_id: `berth__row-${i}`, FAIL_TO_PASS: i }),
    );
    const path = await tempFile('many.jsonl', lines.join('\n'));
    const error = await loadError(path);
    expect(error.issues).toHaveLength(30);
    const message = error.message.split('\n');
    expect(message[0]).toBe(`${path}: 30 problems:`);
    expect(message).toHaveLength(22);
    expect(message[20]).toContain(`${path}:20: FAIL_TO_PASS`);
    expect(message[21]).toBe('  ... and 10 more');
  });
});

describe('localRunProblems', () => {
  it('names an unknown parser before anything runs', async () => {
    const row = {
      instance_id: 'p__q-1',
      test_patch: '',
      FAIL_TO_PASS: [],
      PASS_TO_PASS: [],
      dockerless: { files: { a: 'b' }, test_cmd: 'true', parser: 'no-such-format' },
    };
    const [task] = await loadSwebench(await tempFile('parser.jsonl', JSON.stringify(row)));
    const problems = await localRunProblems(task as never);
    expect(problems.map((p) => p.field)).toEqual(['dockerless.parser']);
    expect(problems[0]?.message).toMatch(/unknown parser "no-such-format"; known: .*pytest/);
    const known = { ...row, dockerless: { ...row.dockerless, parser: 'pytest' } };
    const [ok] = await loadSwebench(await tempFile('parser-ok.jsonl', JSON.stringify(known)));
    expect(await localRunProblems(ok as never)).toEqual([]);
  });
});

describe('testDirectives', () => {
  it('keeps test files of the test patch and drops non-test extensions, as SWE-bench does', () => {
    const patch =
      'diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1 @@\n-a\n+b\n' +
      'diff --git a/tests/data.json b/tests/data.json\n--- a/tests/data.json\n+++ b/tests/data.json\n@@ -1 +1 @@\n-a\n+b\n';
    expect(testDirectives(patch)).toEqual(['tests/test_a.py']);
  });
});

describe("pretty-printed JSON: an error names the bad field's own line, not the row's first line", () => {
  /** The 1-based line of the first line of `text` containing `needle` (after line `from`). */
  const lineWith = (text: string, needle: string, from = 0) =>
    text.split('\n').findIndex((line, index) => index >= from && line.includes(needle)) + 1;

  async function prettyRows(): Promise<Array<Record<string, unknown>>> {
    const text = await readFile(mini, 'utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it('a JSON list (indent 2): a top-level field, a dockerless field, a snapshot path', async () => {
    const rows = await prettyRows();
    const second = rows[1] as Record<string, unknown>;
    second.FAIL_TO_PASS = 42;
    let text = JSON.stringify(rows, null, 2);
    let path = await tempFile('pretty.json', text);
    let error = await loadError(path);
    const rowStart = lineWith(text, '"instance_id": "mini__range-1"');
    const fieldLine = lineWith(text, '"FAIL_TO_PASS": 42');
    expect(fieldLine).toBeGreaterThan(rowStart + 3);
    expect(error.location).toEqual({ file: path, line: fieldLine, field: '[1].FAIL_TO_PASS' });
    expect(error.message).toContain(`${path}:${fieldLine}: [1].FAIL_TO_PASS`);

    second.FAIL_TO_PASS = [];
    (second.dockerless as Record<string, unknown>).timeout_sec = -1;
    text = JSON.stringify(rows, null, 2);
    path = await tempFile('pretty-timeout.json', text);
    error = await loadError(path);
    expect(error.location).toMatchObject({
      line: lineWith(text, '"timeout_sec": -1'),
      field: '[1].dockerless.timeout_sec',
    });

    delete (second.dockerless as Record<string, unknown>).timeout_sec;
    const files = (second.dockerless as { files: Record<string, string> }).files;
    files['../escape.js'] = 'x';
    text = JSON.stringify(rows, null, 4);
    path = await tempFile('pretty-path.json', text);
    error = await loadError(path);
    expect(error.location).toMatchObject({
      line: lineWith(text, '"../escape.js"'),
      field: '[1].dockerless.files["../escape.js"]',
    });
  });

  it('an object keyed by id, a single-row file, and a duplicate id name the field lines', async () => {
    const rows = await prettyRows();
    const first = rows[0] as Record<string, unknown>;
    first.test_patch = 7;
    const keyed = Object.fromEntries(rows.map((row) => [row.instance_id as string, row]));
    let text = JSON.stringify(keyed, null, 2);
    let path = await tempFile('keyed.json', text);
    expect((await loadError(path)).location).toEqual({
      file: path,
      line: lineWith(text, '"test_patch": 7'),
      field: '["mini__stats-1"].test_patch',
    });

    text = JSON.stringify(first, null, 2);
    path = await tempFile('single.json', text);
    expect((await loadError(path)).location).toEqual({
      file: path,
      line: lineWith(text, '"test_patch": 7'),
      field: 'test_patch',
    });

    first.test_patch = '';
    (rows[1] as Record<string, unknown>).instance_id = 'mini__stats-1';
    text = JSON.stringify(rows, null, 2);
    path = await tempFile('dup.json', text);
    const dup = await loadError(path);
    const firstId = lineWith(text, '"instance_id": "mini__stats-1"');
    const secondId = lineWith(text, '"instance_id": "mini__stats-1"', firstId);
    expect(secondId).toBeGreaterThan(firstId);
    expect(dup.location).toEqual({ file: path, line: secondId, field: '[1].instance_id' });
    expect(dup.message).toContain(`first seen at ${path}:${firstId}, row [0]`);
  });

  it("a missing field names the row's first line; a minified list names line 1 and the row's position", async () => {
    const rows = await prettyRows();
    delete (rows[1] as Record<string, unknown>).PASS_TO_PASS;
    let text = JSON.stringify(rows, null, 2);
    let path = await tempFile('missing.json', text);
    const rowStart = lineWith(text, '"instance_id": "mini__range-1"') - 1; // the line of its `{`
    expect((await loadError(path)).location).toEqual({
      file: path,
      line: rowStart,
      field: '[1].PASS_TO_PASS',
    });

    (rows[1] as Record<string, unknown>).PASS_TO_PASS = 'not a list [';
    text = JSON.stringify(rows);
    path = await tempFile('minified.json', text);
    expect((await loadError(path)).location).toEqual({ file: path, line: 1, field: '[1].PASS_TO_PASS' });
  });
});

describe('readRowFile locate', () => {
  it('finds keys, array elements and nested values of one row, not of its neighbours', async () => {
    const text = [
      '[', // 1
      '  {"instance_id": "a", "FAIL_TO_PASS": ["t1"], "x": {"y": 1}},', // 2
      '  {', // 3
      '    "instance_id": "b",', // 4
      '    "x": {"z": [0, {"y": 2}]},', // 5
      '    "FAIL_TO_PASS": [', // 6
      '      "t1",', // 7
      '      "t2"', // 8
      '    ]', // 9
      '  }', // 10
      ']', // 11
    ].join('\n');
    const rows = await readRowFile(await tempFile('locate.json', text));
    const b = rows[1];
    expect(b?.line).toBe(3);
    expect(b?.locate?.(['FAIL_TO_PASS'])).toBe(6);
    expect(b?.locate?.(['FAIL_TO_PASS', 1])).toBe(8);
    expect(b?.locate?.(['x', 'z', 1, 'y'])).toBe(5);
    expect(b?.locate?.(['x', 'y'])).toBeUndefined();
    expect(b?.locate?.(['missing'])).toBeUndefined();
    expect(rows[0]?.locate?.(['x', 'y'])).toBe(2);
  });
});

describe.skipIf(!hasData)('every row of the shared SWE-bench data', () => {
  const folder = join(dataDir, 'swebench');

  it('lite-test loads 5 rows with FAIL_TO_PASS given as lists; none can run without a snapshot or a mirror', async () => {
    const tasks = await loadSwebench(join(folder, 'swe-bench-lite-test.json'));
    expect(tasks.map((t) => t.name)).toEqual([
      'django__django-16255',
      'sympy__sympy-13031',
      'pytest-dev__pytest-11143',
      'scikit-learn__scikit-learn-13584',
      'django__django-15781',
    ]);
    for (const task of tasks) {
      if (task.verifier.kind !== 'swebench') throw new Error('expected swebench');
      expect(task.verifier.failToPass.length).toBeGreaterThan(0);
      const problems = await localRunProblems(task);
      // The test command comes from SWE-bench's specs (test/tasks/swebench-specs.test.ts).
      expect(problems.map((p) => p.field)).toEqual(['dockerless.files']);
    }
    const missingMirror = await localRunProblems(tasks[0] as never, { reposDir: tmpdir() });
    expect(missingMirror[0]?.message).toMatch(/no git mirror of django\/django/);
  });

  it('dev-easy is refused: row [3] repeats the instance_id of row [1]', async () => {
    const error = await loadError(join(folder, 'swe-bench-dev-easy.json'));
    expect(error.location.field).toBe('[3].instance_id');
    expect(error.message).toContain('pylint-dev__astroid-1268');
    expect(error.message).toContain('row [1]');
  });

  it('verified-config loads one row per file with FAIL_TO_PASS as JSON-encoded strings', async () => {
    const dir = join(folder, 'verified-config');
    const tasks = await loadSwebench(dir);
    expect(tasks).toHaveLength((await readdir(dir)).filter((f) => f.endsWith('.json')).length);
    const astropy = tasks.find((t) => t.name === 'astropy__astropy-7606');
    if (astropy?.verifier.kind !== 'swebench') throw new Error('missing');
    expect(astropy.verifier.failToPass).toEqual(['astropy/units/tests/test_units.py::test_unknown_unit3']);
    expect(astropy.verifier.testFiles).toEqual(['astropy/units/tests/test_units.py']);
    expect(astropy.metadata.difficulty).toBe('15 min - 1 hour');
  });

  it('the whole folder stops at the duplicate before anything runs', async () => {
    expect((await loadError(folder)).location.file).toContain('swe-bench-dev-easy.json');
  });
});
