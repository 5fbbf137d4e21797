/**
 * `berth eval` runs as a job, like `berth run`: a locked job folder with config.json,
 * result.json and an events.jsonl (job-start, one trial-end per sample, job-end).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/functional/sandbox.ts';
import { type BerthEvent, parseEventLine } from '../../src/trials/events.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const root = resolve(import.meta.dirname, '..', '..');
const problems = join(fixturesDir, 'functional', 'humaneval-2.jsonl');

describe.skipIf(detectSandbox().kind === 'none')('berth eval as a job', () => {
  it('writes the job folder and its event log; a second run of the job name is its own run', async () => {
    const dir = await temp.make('berth-engine-evaljob-');
    const run = spawnSync(
      process.execPath,
      [
        join(root, 'bin', 'berth.js'),
        'eval',
        '--problems',
        problems,
        '-a',
        'oracle',
        '--out',
        join(dir, 'o.jsonl'),
        '--jobs-dir',
        join(dir, 'jobs'),
        '--job-name',
        'he',
      ],
      { encoding: 'utf8', cwd: dir },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`job:      ${join(dir, 'jobs', 'he')}`);
    const jobDir = join(dir, 'jobs', 'he');
    const events = readFileSync(join(jobDir, 'events.jsonl'), 'utf8')
      .split('\n')
      .map(parseEventLine)
      .filter((e): e is BerthEvent => e !== undefined);
    expect(events.map((e) => e.type)).toEqual(['job-start', 'trial-end', 'trial-end', 'job-end']);
    const ends = events.filter((e) => e.type === 'trial-end');
    expect(ends.map((e) => [e.task, e.status, e.rewards])).toEqual(
      expect.arrayContaining([
        [expect.any(String), 'resolved', { reward: 1 }],
        [expect.any(String), 'resolved', { reward: 1 }],
      ]),
    );
    expect(events.at(-1)).toMatchObject({ type: 'job-end', n_trials: 2, n_resolved: 2 });
    const result = JSON.parse(readFileSync(join(jobDir, 'result.json'), 'utf8'));
    // Harbor's JobResult and JobConfig, berth's part under `berth` (the after-each check reads
    // both with Harbor's models).
    expect(result).toMatchObject({
      n_total_trials: 2,
      stats: { n_completed_trials: 2, n_errored_trials: 0 },
      berth: { job_name: 'he', kind: 'eval', n_trials: 2, n_resolved_trials: 2 },
    });
    expect(JSON.parse(readFileSync(join(jobDir, 'config.json'), 'utf8'))).toMatchObject({
      agents: [{ name: 'oracle' }],
      berth: { kind: 'eval', options: { agent: 'oracle' } },
    });
    expect(readFileSync(join(jobDir, 'job.log'), 'utf8')).toMatch(/ INFO job he started: 2 trial\(s\)/);
  }, 120_000);
});
