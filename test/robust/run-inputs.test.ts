import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPredictions } from '../../src/agents/predictions.ts';
import { InputError } from '../../src/errors.ts';
import { readRowFile } from '../../src/tasks/swebench/read-rows.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'berth.js');
const example = join(root, 'examples', 'swe-dockerless.jsonl');

function berth(args: string[], cwd = root) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', cwd, env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('missing or folder input files are InputErrors naming the file', () => {
  it('readRowFile and loadPredictions: a missing file and a folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-robust-'));
    const missing = join(dir, 'nope.json');
    await expect(readRowFile(missing)).rejects.toThrow(InputError);
    await expect(readRowFile(missing)).rejects.toThrow(`${missing}: no such file`);
    await expect(loadPredictions(missing)).rejects.toThrow(`${missing}: no such file`);
    await expect(loadPredictions(dir)).rejects.toThrow(`${dir}: is a folder, expected a file`);
  });

  it('berth run -a predictions --predictions nope.json exits 2 naming the file, no stack trace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-robust-'));
    const run = berth(['run', '-p', example, '-a', 'predictions', '--predictions', 'nope.json', '--jobs-dir', dir], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('nope.json: no such file');
    expect(run.stderr).not.toContain('internal error');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
