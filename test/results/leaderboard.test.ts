import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLeaderboard } from '../../src/results/leaderboard.ts';
import { berth, runSample, writeSampleWithInstall } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

describe('berth leaderboard: infrastructure errors apart, the interval over tasks', () => {
  let jobs = '';
  beforeAll(async () => {
    jobs = await temp.make('berth-ux-leaderboard-');
    // The bundled sample with one row whose install step fails: an environment error, not the agent's.
    const file = writeSampleWithInstall(
      join(jobs, 'sample-broken-install.jsonl'),
      'berth__toposort-1',
      'exit 3',
    );
    const run = berth([
      'run',
      '-p',
      file,
      '-a',
      'oracle',
      '-k',
      '2',
      '--jobs-dir',
      join(jobs, 'jobs'),
      '--job-name',
      'oracle',
    ]);
    expect(run.code, run.stderr).toBe(0);
    runSample(join(jobs, 'jobs'), 'nop', ['-a', 'nop', '-i', 'berth__csvline-1', '-i', 'berth__toposort-1']);
  }, 300_000);

  it('errors are counted apart and left out of the score; the interval has n = tasks', async () => {
    const board = await buildLeaderboard(join(jobs, 'jobs'));
    const broken = board.datasets.find((d) => d.rows.some((r) => r.agent === 'oracle'));
    const oracle = broken?.rows[0];
    // 3 tasks resolved in both attempts; berth__toposort-1's 2 trials never got a verdict.
    expect(oracle).toMatchObject({ agent: 'oracle', trials: 6, resolved: 6, errors: 2 });
    expect(oracle?.score.tasks).toBe(3);
    expect(oracle?.score.mean).toBe(1);
    // Wilson over 3 tasks at p = 1 (over the 6 attempts it would be 0.6097; over 8 with errors, 6/8).
    expect(oracle?.score.interval?.low).toBeCloseTo(0.4385, 4);
    const text = berth(['leaderboard', join(jobs, 'jobs')]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^1 +oracle +- +3 +6\/6 +100\.0% +43\.9% - 100\.0% +2 /m);
    expect(text.stdout).toContain(
      'errors: trials with no verdict for infrastructure reasons, left out of the score',
    );
  });

  it('a failing agent keeps its failures: nop scores 0 over its tasks with no errors', async () => {
    const board = await buildLeaderboard(join(jobs, 'jobs'));
    const nop = board.datasets.flatMap((d) => d.rows).find((r) => r.agent === 'nop');
    expect(nop).toMatchObject({ trials: 2, resolved: 0, errors: 0 });
    expect(nop?.score).toMatchObject({ tasks: 2, mean: 0 });
    expect(nop?.score.interval?.high).toBeCloseTo(0.6576, 4);
  });
});
