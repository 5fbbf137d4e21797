import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
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
