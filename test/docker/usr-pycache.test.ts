/**
 * No false veto on Docker: an honest test run whose Python writes byte code under /usr (an image
 * built without it, as `PYTHONDONTWRITEBYTECODE=1` in a Dockerfile leaves site-packages) is not
 * "the test run changed the environment outside the work folder" (docs/security.md: Python's
 * `__pycache__` is left out of that check). Real engine, real pytest, the real `berth run`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { buildSampleImages, sample } from '../tamper/harness.ts';
import { BASE_IMAGE, skipDocker } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const temp = tempDirs();
afterAll(temp.cleanup);

describe.skipIf(skipDocker)('byte code the tests write under /usr', () => {
  it('the gold patch is resolved with no tamper finding, though Python wrote __pycache__ under /usr/local', async () => {
    const work = await temp.make('berth-usr-pycache-');
    const row = 'berth__intervals-1';
    const rowImage = (await buildSampleImages(BASE_IMAGE, [row], work)).get(row) as string;
    // The same image without any byte code in site-packages (pytest and its modules).
    const dir = join(work, 'no-bytecode');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'Dockerfile'),
      `FROM ${rowImage}\nRUN find /usr/local/lib -name __pycache__ -prune -exec rm -rf {} +\n`,
    );
    const tag = `berth-tamper-no-bytecode:${rowImage.split(':')[1]}`;
    await execa('docker', ['build', '-q', '--network', 'none', '--label', 'berth.tamper=1', '-t', tag, dir]);
    // What a run of pytest there changes (else this test proves nothing): byte code under /usr.
    const probe = (
      await execa('docker', ['create', '--network', 'none', tag, 'python3', '-m', 'pytest', '--version'])
    ).stdout.trim();
    try {
      await execa('docker', ['start', '-a', probe]);
      const diff = (await execa('docker', ['diff', probe])).stdout;
      expect(diff).toMatch(/^A \/usr\/local\/lib\/python3[^\n]*\/__pycache__/m);
    } finally {
      await execa('docker', ['rm', '-f', probe], { reject: false });
    }

    const data = sample().get(row);
    if (!data) throw new Error(`${row} is not in the sample`);
    const { files: _files, ...dockerless } = data.dockerless;
    const rows = join(work, 'rows.jsonl');
    writeFileSync(
      rows,
      `${JSON.stringify({ ...data, instance_id: 'usr-pycache-1', docker_image: tag, dockerless })}\n`,
    );
    const run = spawnSync(
      process.execPath,
      [bin, 'run', '-p', rows, '-a', 'oracle', '--jobs-dir', work, '--job-name', 'j'],
      { env: { ...process.env, CI: '1' }, encoding: 'utf8', timeout: 600_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const trial = readdirSync(join(work, 'j')).find((n) => n.startsWith('usr-pycache-1'));
    expect(trial, `${run.stdout}\n${run.stderr}`).toBeDefined();
    const result = JSON.parse(readFileSync(join(work, 'j', trial as string, 'result.json'), 'utf8'));
    const berth = JSON.stringify(result.berth, null, 2);
    expect(result.berth.tampering?.findings ?? [], berth).toEqual([]);
    expect(result.berth.status, berth).toBe('resolved');
  }, 900_000);
});
