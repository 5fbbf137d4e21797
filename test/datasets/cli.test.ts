import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'berth-dataset-cli-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

const berth = (...args: string[]) => spawnSync('node', [bin, ...args], { encoding: 'utf8' });

describe('berth dataset', () => {
  it('controls writes the three predictions files of the sample, matching the committed ones', async () => {
    const result = berth('dataset', 'controls', sample, '-o', scratch);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/empty: 4 prediction\(s\)[\s\S]*cross: 4[\s\S]*partial: 4/);
    for (const name of ['empty', 'cross', 'partial']) {
      const committed = fileURLToPath(new URL(`../../examples/predictions/${name}.jsonl`, import.meta.url));
      expect(await readFile(join(scratch, `${name}.jsonl`), 'utf8')).toBe(await readFile(committed, 'utf8'));
    }
  });

  it('controls refuses a broken row up front, exit 2 with the message of `berth run`, and writes nothing', async () => {
    const rows = (await readFile(sample, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    rows[2].PASS_TO_PASS = { not: 'a list' };
    const file = join(scratch, 'one-broken.json');
    await writeFile(file, JSON.stringify(rows, null, 2));
    const out = join(scratch, 'controls-out');
    await mkdir(out);
    await writeFile(join(out, 'empty.jsonl'), 'kept\n');
    const controls = berth('dataset', 'controls', file, '-o', out);
    const run = berth('run', '-p', file, '--jobs-dir', join(scratch, 'jobs-never'));
    expect(run.status).toBe(2);
    expect(controls.status).toBe(2);
    expect(controls.stderr).toBe(run.stderr);
    const line =
      (await readFile(file, 'utf8')).split('\n').findIndex((l) => l.includes('"PASS_TO_PASS": {')) + 1;
    expect(controls.stderr).toContain(`${file}:${line}: [2].PASS_TO_PASS`);
    expect(controls.stdout).toBe('');
    expect(await readdir(out)).toEqual(['empty.jsonl']);
    expect(await readFile(join(out, 'empty.jsonl'), 'utf8')).toBe('kept\n');
    const validate = berth('dataset', 'validate', file, '--no-run');
    expect(validate.status).toBe(2);
    expect(validate.stdout).toContain(run.stderr.replace(/^berth: /, '').trim());
  });

  it('validate --no-run checks schema, patches and test files, and estimates tokens', () => {
    const result = berth('dataset', 'validate', sample, '--no-run', '--json');
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.total).toBe(4);
    expect(report.invalid).toBe(0);
    for (const row of report.rows) {
      const byName = Object.fromEntries(row.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok]));
      expect(byName).toMatchObject({
        schema: true,
        lists: true,
        'test-files-only': true,
        'patches-apply': true,
      });
      expect(row.promptTokens).toBeGreaterThan(500);
    }
  });

  it('validate and controls accept a folder of row files, as berth run -p does', async () => {
    const lines = (await readFile(sample, 'utf8')).trim().split('\n');
    const folder = join(scratch, 'rows-folder');
    await mkdir(join(folder, 'sub'), { recursive: true });
    await writeFile(join(folder, 'a.jsonl'), `${lines.slice(0, 2).join('\n')}\n`);
    await writeFile(join(folder, 'sub', 'b.json'), JSON.stringify(lines.slice(2).map((l) => JSON.parse(l))));
    await writeFile(join(folder, 'notes.txt'), 'not a row file\n');
    const result = berth('dataset', 'validate', folder, '--no-run', '--json');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.total).toBe(4);
    expect(report.invalid).toBe(0);
    expect(report.rows.map((row: { instance_id: string }) => row.instance_id)).toEqual(
      lines.map((line) => JSON.parse(line).instance_id),
    );
    const controls = berth('dataset', 'controls', folder, '-o', join(scratch, 'folder-controls'));
    expect(controls.status).toBe(0);
    expect(controls.stdout).toMatch(/empty: 4 prediction\(s\)/);

    // A duplicate across files is refused naming both places; an empty folder names the folder.
    await writeFile(join(folder, 'sub', 'c.jsonl'), `${lines[0]}\n`);
    const duplicate = berth('dataset', 'validate', folder, '--no-run');
    expect(duplicate.status).toBe(2);
    expect(duplicate.stderr).toContain(join(folder, 'sub', 'c.jsonl'));
    expect(duplicate.stderr).toContain(`first at ${join(folder, 'a.jsonl')}:1`);
    const empty = join(scratch, 'empty-folder');
    await mkdir(empty);
    const none = berth('dataset', 'validate', empty, '--no-run');
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('the folder holds no .json or .jsonl file');
  });

  it('validate exits 2 and says why when the test patch touches source and gold does not apply', async () => {
    const rows = (await readFile(sample, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const [first, second] = rows;
    first.test_patch = first.patch; // a "test patch" that changes source files
    second.patch = rows[2].patch; // another instance's gold: does not apply
    const file = join(scratch, 'broken.jsonl');
    await writeFile(file, `${JSON.stringify(first)}\n${JSON.stringify(second)}\n`);
    const result = berth('dataset', 'validate', file, '--no-run');
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(
      /berth__csvline-1\s+NO .*test-files-only: test_patch touches non-test files: lib\/csvline\.js/,
    );
    expect(result.stdout).toMatch(/berth__durations-1\s+NO .*patches-apply: gold patch does not apply/);
    expect(result.stdout).toContain('0/2 valid');
  });

  it('build exits 2 naming the spec file and field of a bad spec', async () => {
    const spec = join(scratch, 'spec.json');
    await writeFile(
      spec,
      JSON.stringify({ instance_id: 'x', repo: 'a/b', test_cmd: 'true {tests}', base_commit: 'abc' }),
    );
    const result = berth('dataset', 'build', spec, '-o', join(scratch, 'out.jsonl'));
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/spec\.json: problem_statement: missing/);
  });
});
