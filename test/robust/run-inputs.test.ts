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
      `  ${file}:line ${lineOf('timeout_sec = "long"')} (field \`agent.timeout_sec\`): expected a number, got "long"\n`,
    );
    expect(run.stderr).toContain(
      `  ${file}:line ${lineOf('cpus = "two"')} (field \`environment.cpus\`): expected a number, got "two"\n`,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(jobs)).toBe(false);
  });
});
