import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { lockJobDir } from '../../src/jobs/lock.ts';
import { defaultJobName } from '../../src/jobs/names.ts';
import { identityMismatch } from '../../src/jobs/resume.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const mini = join(fixturesDir, 'swebench', 'mini.jsonl');

function berth(args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync('node', ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('a job name is one configuration, run by one process at a time', () => {
  it('re-using --job-name with another agent, or filters adding trials, is refused (exit 2); the same configuration or a part of it resumes', async () => {
    const jobs = await temp.make('berth-robust-');
    const first = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(first.code).toBe(0);
    const other = berth([
      'run',
      '-p',
      mini,
      '-a',
      'oracle',
      '-l',
      '1',
      '--jobs-dir',
      jobs,
      '--job-name',
      'j',
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('job j exists with a different configuration: agent oracle vs nop');
    expect(other.stderr).toContain('use another --job-name or remove the folder');
    const more = berth(['run', '-p', mini, '-a', 'nop', '-l', '2', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(more.code).toBe(2);
    expect(more.stderr).toContain('limit 2 vs 1');
    // Nothing of the refused runs landed in the folder.
    const result = JSON.parse(readFileSync(join(jobs, 'j', 'result.json'), 'utf8')) as {
      n_total_trials: number;
    };
    expect(result.n_total_trials).toBe(1);
    expect(more.stderr).toMatch(/1 trial\(s\) not in the job, e.g. mini__\w+-1__1/);
    // Other filters that pick only trials of the job resume that part of it.
    const part = berth([
      'run',
      '-p',
      mini,
      '-a',
      'nop',
      '-i',
      'mini__stats-*',
      '--jobs-dir',
      jobs,
      '--job-name',
      'j',
    ]);
    expect(part.code, part.stderr).toBe(0);
    expect(part.stdout).toContain('kept from a previous run');
    const again = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(again.code).toBe(0);
    expect(existsSync(join(jobs, 'j', '.berth.lock'))).toBe(false);
  });

  it('a job folder locked by a live process is refused; a stale lock (dead pid) is taken over', async () => {
    const jobs = await temp.make('berth-robust-');
    await mkdir(join(jobs, 'j'));
    await writeFile(join(jobs, 'j', '.berth.lock'), `${process.pid}\n`);
    const locked = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(locked.code).toBe(2);
    expect(locked.stderr).toContain(`job j is being run by another berth process (pid ${process.pid})`);
    expect(existsSync(join(jobs, 'j', 'config.json'))).toBe(false);

    await writeFile(join(jobs, 'j', '.berth.lock'), `${deadPid()}\n`);
    const stale = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(stale.code).toBe(0);
    expect(existsSync(join(jobs, 'j', '.berth.lock'))).toBe(false);
  });

  it('lockJobDir: a second lock in the same folder fails while the first is held', async () => {
    const dir = join(await temp.make('berth-robust-'), 'job');
    const release = await lockJobDir(dir, 'job');
    await writeFile(join(dir, '.berth.lock'), `${process.ppid}\n`);
    await expect(lockJobDir(dir, 'job')).rejects.toThrow(/being run by another berth process/);
    await release();
  });

  it('identityMismatch lists each difference; default job names differ within one second', () => {
    expect(identityMismatch({ agent: 'oracle', attempts: 1 }, { agent: 'nop', attempts: 1 })).toEqual([
      'agent nop vs oracle',
    ]);
    expect(identityMismatch(undefined, { agent: 'nop' })).toEqual([]);
    const at = new Date(2026, 0, 2, 3, 4, 5);
    const names = new Set(Array.from({ length: 20 }, () => defaultJobName(at)));
    expect(names.size).toBeGreaterThan(1);
    for (const name of names) expect(name).toMatch(/^2026-01-02__03-04-05-[0-9a-f]{4}$/);
  });
});
