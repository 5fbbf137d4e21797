import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berth, runSample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

describe('berth report of several jobs (the oracle and nop on two sample rows, JavaScript and Python)', () => {
  let jobs = '';
  beforeAll(async () => {
    jobs = await temp.make('berth-ux-report-');
    const rows = ['-i', 'berth__csvline-1', '-i', 'berth__durations-1'];
    runSample(jobs, 'oracle', ['-a', 'oracle', ...rows]);
    runSample(jobs, 'nop', ['-a', 'nop', ...rows]);
  }, 300_000);

  it('gives each job its own section, named by job and agent, and points at berth compare', () => {
    const run = berth(['report', join(jobs, 'oracle'), join(jobs, 'nop'), '--by', 'language']);
    expect(run.code).toBe(0);
    // Pooled, this was one table reading `total  resolved 2/4 (50.0%)`.
    expect(run.stdout).not.toContain('resolved 2/4');
    expect(run.stdout).toContain('job oracle (agent oracle, model -)\nlanguage');
    expect(run.stdout).toContain('job nop (agent nop, model -)\nlanguage');
    const [oracle, nop] = run.stdout.split('job nop (');
    expect(oracle).toContain('total  resolved 2/2 (100.0%)');
    expect(nop).toContain('total  resolved 0/2 (0.0%)');
    expect(run.stdout).toContain(
      `2 jobs, each reported on its own (they ran different agents or models); to compare them: berth compare ${join(jobs, 'oracle')} ${join(jobs, 'nop')}`,
    );
  });

  it('--json: every group names its job and agent', () => {
    const run = berth(['report', join(jobs, 'oracle'), join(jobs, 'nop'), '--by', 'language', '--json']);
    expect(run.code).toBe(0);
    const groups = JSON.parse(run.stdout) as Array<{
      job: string;
      agent: string;
      resolved: number;
      trials: number;
    }>;
    expect(groups.map((g) => [g.job, g.agent, g.resolved, g.trials])).toEqual([
      ['oracle', 'oracle', 1, 1],
      ['oracle', 'oracle', 1, 1],
      ['nop', 'nop', 0, 1],
      ['nop', 'nop', 0, 1],
    ]);
  });

  it('one job: the one table, as before', () => {
    const run = berth(['report', join(jobs, 'oracle'), '--by', 'language']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('job oracle');
    expect(run.stdout).toContain('total  resolved 2/2 (100.0%)');
  });
});
