import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPredictions } from '../../src/agents/predictions.ts';
import { InputError } from '../../src/errors.ts';
import { readRowFile } from '../../src/tasks/swebench/read-rows.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'berth.js');
const example = join(root, 'examples', 'swe-dockerless.jsonl');

function berth(args: string[], cwd = root) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, CI: '1' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('missing or folder input files are InputErrors naming the file', () => {
  it('readRowFile and loadPredictions: a missing file and a folder', async () => {
    const dir = await temp.make('berth-robust-');
    const missing = join(dir, 'nope.json');
    await expect(readRowFile(missing)).rejects.toThrow(InputError);
    await expect(readRowFile(missing)).rejects.toThrow(`${missing}: no such file`);
    await expect(loadPredictions(missing)).rejects.toThrow(`${missing}: no such file`);
    await expect(loadPredictions(dir)).rejects.toThrow(`${dir}: is a folder, expected a file`);
  });

  it('berth run -a predictions --predictions nope.json exits 2 naming the file, no stack trace', async () => {
    const dir = await temp.make('berth-robust-');
    const run = berth(
      ['run', '-p', example, '-a', 'predictions', '--predictions', 'nope.json', '--jobs-dir', dir],
      dir,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('nope.json: no such file');
    expect(run.stderr).not.toContain('internal error');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('berth run with nothing to run names the dataset', () => {
  it('an empty dataset file and a filter that keeps nothing', async () => {
    const dir = await temp.make('berth-robust-');
    const empty = join(dir, 'empty.jsonl');
    await writeFile(empty, '');
    const run = berth(['run', '-p', empty, '--jobs-dir', dir], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no task to run: ${empty} holds no task`);
    const filtered = berth(['run', '-p', example, '-i', 'zzz*', '--jobs-dir', dir], dir);
    expect(filtered.code).toBe(2);
    expect(filtered.stderr).toContain(`none of the 4 task(s) of ${example} is left to run (check -i/-x/-l)`);
  });
});

describe('a task.toml with several type errors', () => {
  it('berth run exits 2 listing every one with its line and key, and writes no job', async () => {
    const dir = await temp.make('berth-robust-');
    const task = join(dir, 'calc');
    await cp(join(root, 'test', 'fixtures', 'harbor', 'tasks', 'calc'), task, { recursive: true });
    const toml = await readFile(join(task, 'task.toml'), 'utf8');
    const broken = toml
      .replace(/^\[agent\]\ntimeout_sec = 60\.0$/m, '[agent]\ntimeout_sec = "long"')
      .replace(/^cpus = 1$/m, 'cpus = "two"');
    expect(broken).not.toBe(toml);
    await writeFile(join(task, 'task.toml'), broken);
    const lineOf = (text: string) => broken.split('\n').indexOf(text) + 1;
    const jobs = join(dir, 'jobs');
    const run = berth(['run', '-p', task, '-a', 'oracle', '--jobs-dir', jobs]);
    expect(run.code).toBe(2);
    const file = join(task, 'task.toml');
    expect(run.stderr).toContain(`berth: ${file}: 2 problems:\n`);
    expect(run.stderr).toContain(
      `  ${file}:${lineOf('timeout_sec = "long"')}: agent.timeout_sec: expected a number, got "long"\n`,
    );
    expect(run.stderr).toContain(
      `  ${file}:${lineOf('cpus = "two"')}: environment.cpus: expected a number, got "two"\n`,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(jobs)).toBe(false);
  });
});

describe('berth run lists every bad row, prediction and task before any trial', () => {
  const exampleLines = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n');

  it('a DockerLess dataset with three bad rows: exit 2, each row with its line and field, no job', async () => {
    const dir = await temp.make('berth-robust-');
    const lines = await exampleLines(example);
    const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const broken = [
      lines[0],
      JSON.stringify({ ...rows[1], PASS_TO_PASS: 3 }),
      JSON.stringify({ ...rows[2], test_patch: null }),
      lines[3],
      '{"instance_id": ',
    ];
    const file = join(dir, 'rows.jsonl');
    await writeFile(file, `${broken.join('\n')}\n`);
    const jobs = join(dir, 'jobs');
    const run = berth(['run', '-p', file, '-a', 'oracle', '--jobs-dir', jobs]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`berth: ${file}: 3 problems:\n`);
    expect(run.stderr).toContain(`  ${file}:2: PASS_TO_PASS: `);
    expect(run.stderr).toContain(`  ${file}:3: test_patch: expected a string, got null\n`);
    expect(run.stderr).toContain(`  ${file}:5: not a valid JSON line`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(jobs)).toBe(false);
  });

  it('a predictions file with three bad lines: exit 2, each line listed, no job', async () => {
    const dir = await temp.make('berth-robust-');
    const lines = await exampleLines(join(root, 'examples', 'predictions', 'partial.jsonl'));
    const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const broken = [
      JSON.stringify({ ...rows[0], model_patch: 1 }),
      lines[1],
      JSON.stringify({ ...rows[1], instance_id: 5 }),
      lines[1],
    ];
    const file = join(dir, 'preds.jsonl');
    await writeFile(file, `${broken.join('\n')}\n`);
    const jobs = join(dir, 'jobs');
    const run = berth(['run', '-p', example, '-a', 'predictions', '--predictions', file, '--jobs-dir', jobs]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`berth: ${file}: 3 problems:\n`);
    expect(run.stderr).toContain(`  ${file}:1: model_patch: expected a string or null\n`);
    expect(run.stderr).toContain(`  ${file}:3: instance_id: missing or not a string\n`);
    expect(run.stderr).toContain(`  ${file}:4: instance_id: duplicate prediction for `);
    expect(existsSync(jobs)).toBe(false);
  });

  it('a Harbor dataset with two bad tasks and a good one: every bad task listed, not run; exit 2', async () => {
    const dir = await temp.make('berth-robust-');
    const dataset = join(dir, 'dataset');
    const fixtures = join(root, 'test', 'fixtures', 'harbor', 'tasks');
    for (const name of ['calc', 'calc-json'])
      await cp(join(fixtures, name), join(dataset, name), { recursive: true });
    await cp(join(fixtures, 'calc'), join(dataset, 'good'), { recursive: true });
    const calc = join(dataset, 'calc', 'task.toml');
    const calcText = (await readFile(calc, 'utf8')).replace(/^cpus = 1$/m, 'cpus = "two"');
    await writeFile(
      calc,
      calcText.replace(/^\[agent\]\ntimeout_sec = 60\.0$/m, '[agent]\ntimeout_sec = "long"'),
    );
    const json = join(dataset, 'calc-json', 'task.toml');
    const jsonText = await readFile(json, 'utf8');
    expect(jsonText).toMatch(/^schema_version = "1\.3"$/m);
    await writeFile(json, jsonText.replace(/^schema_version = "1\.3"$/m, 'schema_version = 1.3'));
    const jobs = join(dir, 'jobs');
    const run = berth(['run', '-p', dataset, '-a', 'oracle', '--jobs-dir', jobs]);
    expect(run.code).toBe(2);
    // Listed before anything runs; the good task runs (on Docker: test/docker/run-cli.test.ts).
    expect(run.stderr).toContain(
      'berth: 2 invalid task(s) skipped, not run (the others run):\n  3 problems in 2 files:\n',
    );
    expect(run.stderr).toMatch(
      new RegExp(`  ${calc}:\\d+: agent.timeout_sec: expected a number, got "long"\n`),
    );
    expect(run.stderr).toMatch(
      new RegExp(`  ${calc}:\\d+: environment.cpus: expected a number, got "two"\n`),
    );
    expect(run.stderr).toContain(`  ${json}:1: schema_version: expected a string, got 1.3\n`);
    const listing = run.stderr.split('\nberth: ')[0] as string;
    expect(listing).not.toContain(join(dataset, 'good'));
    expect(run.stderr).toContain(
      'berth: 2 invalid task(s) were skipped (listed above): calc, calc-json; exit 2',
    );
  }, 300_000);
});
