/**
 * berth's probe folders on the host (local environments) go with their trial, and with berth
 * itself when it is stopped by a signal in the middle of a test run; after `kill -9` there,
 * `berth clean` removes the folder the dead process left (issue 10 §4).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));

const probeDirsOf = (pid: number) =>
  readdirSync(tmpdir()).filter((n) => n.startsWith(`berth-probe-p${pid}-`));

/** `berth run` of one sample instance with the oracle, into `jobs` (a new folder by default). */
async function startBerth(instance: string, jobs?: string) {
  const args = ['run', '-p', sample, '-i', instance, '-a', 'oracle', '--job-name', 'j'];
  args.push('--jobs-dir', jobs ?? (await temp.make('berth-probe-cleanup-')));
  return spawn(process.execPath, [bin, ...args], { env: { ...process.env, CI: '1' }, stdio: 'ignore' });
}

describe('probe folders', () => {
  it('are removed when berth is stopped by SIGTERM while the tests run', async () => {
    const child = await startBerth('berth__durations-1');
    const pid = child.pid as number;
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Wait for the verifier's probe folder, then stop berth in the middle of the test run.
    const deadline = Date.now() + 120_000;
    while (probeDirsOf(pid).length === 0 && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 20));
    expect(probeDirsOf(pid).length, 'the probe folder never appeared').toBe(1);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(probeDirsOf(pid)).toEqual([]);
  });

  it('kill -9 while the tests run: the folder left behind is removed by berth clean', async () => {
    const child = await startBerth('berth__durations-1');
    const pid = child.pid as number;
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const deadline = Date.now() + 120_000;
    while (probeDirsOf(pid).length === 0 && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 20));
    expect(probeDirsOf(pid).length, 'the probe folder never appeared').toBe(1);
    child.kill('SIGKILL');
    await exited;
    // No handler runs on SIGKILL: the folder stays until someone reclaims it.
    expect(probeDirsOf(pid).length, 'the killed berth left its probe folder').toBe(1);
    const clean = spawnSync(process.execPath, [bin, 'clean'], {
      env: { ...process.env, CI: '1' },
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(clean.status, clean.stderr).toBe(0);
    expect(probeDirsOf(pid)).toEqual([]);
  });

  it('are removed after a trial that finishes', async () => {
    const jobs = await temp.make('berth-probe-cleanup-');
    const child = await startBerth('berth__toposort-1', jobs);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    expect(probeDirsOf(child.pid as number)).toEqual([]);
    expect(readdirSync(join(jobs, 'j')).some((n) => n.startsWith('berth__toposort-1'))).toBe(true);
  });
});
