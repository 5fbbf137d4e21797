import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/sandbox/cgroup.ts';
import { fixturesDir } from '../helpers/data.ts';
import { notHarborJobFolder } from '../helpers/harbor-job-check.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const mini = join(fixturesDir, 'swebench', 'mini.jsonl');

function berth(args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every trial folder's result.json text, by trial name. */
function trialResults(jobDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(jobDir, { withFileTypes: true })) {
    const file = join(jobDir, entry.name, 'result.json');
    if (entry.isDirectory() && existsSync(file)) out[entry.name] = readFileSync(file, 'utf8');
  }
  return out;
}

describe('a damaged job folder is refused, never taken for a fresh job', () => {
  it('a corrupt config.json refuses the run (exit 2, file named) and keeps every trial result', async () => {
    const jobs = await temp.make('berth-state-');
    const first = berth([
      'run',
      '-p',
      mini,
      '-a',
      'oracle',
      '-l',
      '2',
      '--jobs-dir',
      jobs,
      '--job-name',
      'j',
    ]);
    expect(first.code, first.stderr).toBe(0);
    const before = trialResults(join(jobs, 'j'));
    expect(Object.keys(before)).toHaveLength(2);
    notHarborJobFolder(join(jobs, 'j'), 'its config.json is damaged on purpose');
    for (const bad of ['[', '', '"text"', '{"berth_identity": ']) {
      await writeFile(join(jobs, 'j', 'config.json'), bad);
      const run = berth(['run', '-p', mini, '-a', 'nop', '-l', '2', '--jobs-dir', jobs, '--job-name', 'j']);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(join(jobs, 'j', 'config.json'));
      expect(run.stderr).toContain('use another --job-name');
      expect(trialResults(join(jobs, 'j'))).toEqual(before);
      expect(readFileSync(join(jobs, 'j', 'config.json'), 'utf8')).toBe(bad);
    }
  });

  it("a corrupt trial result.json refuses the run naming it; the other trials' results are kept", async () => {
    const jobs = await temp.make('berth-state-');
    const first = berth([
      'run',
      '-p',
      mini,
      '-a',
      'oracle',
      '-l',
      '2',
      '--jobs-dir',
      jobs,
      '--job-name',
      'j',
    ]);
    expect(first.code, first.stderr).toBe(0);
    const before = trialResults(join(jobs, 'j'));
    const [damaged] = Object.keys(before) as [string];
    notHarborJobFolder(join(jobs, 'j'), 'a trial result.json is damaged on purpose');
    await writeFile(join(jobs, 'j', damaged, 'result.json'), '{"berth":');
    const run = berth(['run', '-p', mini, '-a', 'oracle', '-l', '2', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(join(jobs, 'j', damaged, 'result.json'));
    expect(run.stderr).toContain('not valid JSON');
    const after = trialResults(join(jobs, 'j'));
    for (const [name, text] of Object.entries(before)) if (name !== damaged) expect(after[name]).toBe(text);
  });
});

describe('the job lock names one process: pid and start time', () => {
  it("a lock holding a live pid with another process's start time (pid reused) is stale and taken over", async (ctx) => {
    const start = processStartTime(process.pid);
    if (start === undefined) ctx.skip('no /proc on this system: pid-only locks');
    const jobs = await temp.make('berth-state-');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(jobs, 'j'));
    await writeFile(join(jobs, 'j', '.berth.lock'), `${process.pid} ${Number(start) + 12345}\n`);
    const reused = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(reused.code, reused.stderr).toBe(0);
    expect(existsSync(join(jobs, 'j', '.berth.lock'))).toBe(false);

    await writeFile(join(jobs, 'j', '.berth.lock'), `${process.pid} ${start}\n`);
    const live = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', jobs, '--job-name', 'j']);
    expect(live.code).toBe(2);
    expect(live.stderr).toContain(`being run by another berth process (pid ${process.pid})`);
  });
});
