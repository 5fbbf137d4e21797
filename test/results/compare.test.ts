import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareJobs, compareTwo } from '../../src/results/compare.ts';
import { buildLeaderboard } from '../../src/results/leaderboard.ts';
import type { JobRecord, TrialRecord } from '../../src/results/model.ts';
import { readJob } from '../../src/results/read-job.ts';
import { blankTrialRecord } from '../../src/results/trial-record.ts';
import { berth, runPartial, runSample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

/** A trial record with what a comparison reads. */
function trial(task: string, resolved: boolean, extra: Partial<TrialRecord> = {}): TrialRecord {
  return {
    ...blankTrialRecord(`${task}__${extra.attempt ?? 1}`, task, resolved ? 'resolved' : 'failed'),
    status: resolved ? 'resolved' : 'unresolved',
    reward: resolved ? 1 : 0,
    agent: 'a',
    dataset: 'd',
    repository: task.startsWith('x') ? 'org/x' : 'org/y',
    language: 'python',
    duration_sec: 1,
    ...extra,
  };
}

const job = (name: string, trials: TrialRecord[]): JobRecord => ({
  name,
  dir: `/nowhere/${name}`,
  writer: 'berth',
  dataset: 'd',
  agent: 'a',
  model: null,
  started_at: null,
  finished_at: null,
  updated_at: null,
  running: false,
  n_planned: trials.length,
  trials,
  has_events: false,
  warnings: [],
});

describe('comparing two jobs (synthetic records)', () => {
  it("one attempt each: McNemar's exact test on the discordant tasks, flips each way", () => {
    // 12 tasks: 9 resolved only by B, 1 only by A, 2 by both. McNemar: 2 * P(X <= 1 | 10) = 22/1024.
    const tasks = Array.from({ length: 12 }, (_, i) => `${i < 6 ? 'x' : 'y'}${i}`);
    const a = job(
      'A',
      tasks.map((t, i) => trial(t, i === 0 || i >= 10)),
    );
    const b = job(
      'B',
      tasks.map((t, i) => trial(t, i !== 0)),
    );
    const c = compareTwo(a, b, { seed: 1, resamples: 2000 });
    expect(c.test).toBe("McNemar's exact test");
    expect(c.discordant).toEqual({ only_a: 1, only_b: 9 });
    expect(c.p).toBeCloseTo(22 / 1024, 12);
    expect(c.delta).toBeCloseTo(8 / 12, 12);
    expect(c.gained.map((f) => f.task)).toEqual(tasks.slice(1, 10).sort());
    expect(c.lost).toEqual([{ task: 'x0', a: '1/1', b: '0/1' }]);
    expect(c.verdict).toMatch(
      /^B is better: B resolved 66\.7 pts more than A .*significant at the 5% level \(p = 0\.0215\)/,
    );
    expect(c.by.repository.map((g) => [g.value, g.shared_tasks])).toEqual([
      ['org/x', 6],
      ['org/y', 6],
    ]);
    expect(c.interval?.low).toBeGreaterThan(0.2);
    expect(c.interval?.high).toBeLessThanOrEqual(1);
  });

  it('several attempts: an exact sign-flip permutation test over tasks, and tasks only one job ran are left out', () => {
    const a = job('A', [
      trial('t1', true),
      trial('t1', false, { name: 't1__2', attempt: 2 }),
      trial('t2', false),
      trial('t2', false, { name: 't2__2', attempt: 2 }),
      trial('only-a', true),
    ]);
    const b = job('B', [
      trial('t1', true),
      trial('t1', true, { name: 't1__2', attempt: 2 }),
      trial('t2', true),
      trial('t2', false, { name: 't2__2', attempt: 2 }),
      trial('only-b', true),
    ]);
    const c = compareTwo(a, b, { seed: 42, resamples: 1000 });
    expect(c.single_attempt).toBe(false);
    expect(c.test).toBe('exact sign-flip permutation test over tasks (4 arrangements)');
    // Both tasks went up: 2 of the 4 sign flips are as far from 0.
    expect(c.p).toBe(0.5);
    expect(c.shared_tasks).toBe(2);
    expect([c.rate_a, c.rate_b, c.delta]).toEqual([0.25, 0.75, 0.5]);
    expect(c.gained).toEqual([
      { task: 't1', a: '1/2', b: '2/2' },
      { task: 't2', a: '0/2', b: '1/2' },
    ]);
    expect([c.only_in_a, c.only_in_b]).toEqual([1, 1]);
    expect(compareTwo(a, b, { seed: 42, resamples: 1000 })).toEqual(c);
  });
});

describe('berth compare and berth leaderboard on real jobs', () => {
  let jobs = '';
  let other = '';
  beforeAll(async () => {
    jobs = await temp.make('berth-compare-');
    runSample(jobs, 'oracle', ['-a', 'oracle', '-n', '2']);
    runPartial(jobs, 'partial');
    runSample(jobs, 'oracle-k2', [
      '-a',
      'oracle',
      '-k',
      '2',
      '-n',
      '2',
      '-i',
      'berth__csvline-1',
      '-i',
      'berth__toposort-1',
    ]);
    // In its own folder: the leaderboard below reads every job of `jobs`.
    other = await temp.make('berth-compare-k2-');
    runSample(other, 'oracle-k2-all', ['-a', 'oracle', '-k', '2', '-n', '2']);
    runSample(jobs, 'nop-k2', ['-a', 'nop', '-k', '2', '-i', 'berth__csvline-1', '-i', 'berth__toposort-1']);
  }, 300_000);

  it('the terminal names the tasks that flipped and the test; --json carries the numbers', () => {
    const run = berth(['compare', join(jobs, 'oracle'), join(jobs, 'partial')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('partial vs oracle over 4 shared task(s):');
    expect(run.stdout).toContain(
      "McNemar's exact test: p = 0.1250, 4 resolved only by oracle, 0 only by partial",
    );
    expect(run.stdout).toContain(
      'no longer resolved (4): berth__csvline-1, berth__durations-1, berth__intervals-1, berth__toposort-1',
    );
    expect(run.stdout).toContain('bootstrap: seed 1, 10000 resamples');
    const json = berth(['compare', join(jobs, 'oracle'), join(jobs, 'partial'), '--json', '--seed', '7']);
    const result = JSON.parse(json.stdout);
    expect(result.seed).toBe(7);
    expect(result.comparisons[0]).toMatchObject({
      a: 'oracle',
      b: 'partial',
      p: 0.125,
      delta: -1,
      shared_tasks: 4,
    });
    expect(result.comparisons[0].by.language.map((g: { value: string }) => g.value)).toEqual([
      'javascript',
      'python',
    ]);
  });

  it('different attempt counts (oracle -k 2 vs partial predictions): p = 0.125, not significant; 1-task rows p = 1', () => {
    // The bootstrap gave p = 1.0e-4 here: every task differs by exactly -1, so every resample is identical.
    const run = berth(['compare', join(other, 'oracle-k2-all'), join(jobs, 'partial')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('partial vs oracle-k2-all over 4 shared task(s):');
    expect(run.stdout).toContain('exact sign-flip permutation test over tasks (16 arrangements): p = 0.1250');
    expect(run.stdout).toContain('but this is not significant at the 5% level (p = 0.1250)');
    expect(run.stdout).not.toMatch(/, significant/);
    const result = JSON.parse(
      berth(['compare', join(other, 'oracle-k2-all'), join(jobs, 'partial'), '--json']).stdout,
    );
    const c = result.comparisons[0];
    expect(c).toMatchObject({ p: 0.125, delta: -1, shared_tasks: 4, single_attempt: false });
    const rows = [...c.by.repository, ...c.by.language];
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      if (row.shared_tasks === 1) expect(row.p).toBe(1);
      else expect(row.p).toBeGreaterThanOrEqual(0.125);
    }
    expect(rows.some((row: { shared_tasks: number }) => row.shared_tasks === 1)).toBe(true);
  });

  it('several attempts use the permutation test, and print the bootstrap seed', () => {
    const run = berth([
      'compare',
      join(jobs, 'nop-k2'),
      join(jobs, 'oracle-k2'),
      '--seed',
      '99',
      '--resamples',
      '500',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('exact sign-flip permutation test over tasks (4 arrangements): p = 0.5000');
    expect(run.stdout).toContain(
      'now resolved (2): berth__csvline-1 (0/2 -> 2/2), berth__toposort-1 (0/2 -> 2/2)',
    );
    expect(run.stdout).toContain('bootstrap: seed 99, 500 resamples');
    expect(berth(['compare', join(jobs, 'oracle')]).code).toBe(2);
    expect(berth(['compare', join(jobs, 'oracle'), join(jobs, 'nope')]).stderr).toContain('not a job folder');
  });

  it('the leaderboard ranks agent × model on the dataset, from the job folders', async () => {
    const board = await buildLeaderboard(jobs);
    expect(board.datasets.map((d) => d.dataset)).toEqual(['swe-dockerless']);
    const rows = board.datasets[0]?.rows ?? [];
    expect(
      rows.map((r) => [r.agent, r.model, r.resolved, r.trials, r.score.tasks, r.errors, r.jobs]),
    ).toEqual([
      // The oracle and nop name no model (Harbor's AgentInfo.model_info is null for them).
      ['oracle', null, 8, 8, 4, 0, ['oracle', 'oracle-k2']],
      ['nop', null, 0, 4, 2, 0, ['nop-k2']],
      ['predictions', 'control-partial', 0, 4, 4, 0, ['partial']],
    ]);
    // The interval is over the 4 tasks (Wilson, p = 1, n = 4), not the 8 attempts (0.6756).
    expect(rows[0]?.score.interval?.low).toBeCloseTo(0.5101, 4);
    const text = berth(['leaderboard', jobs]);
    expect(text.stdout).toMatch(/^1 +oracle +- +4 +8\/8 +100\.0% +51\.0% - 100\.0% +0 /m);
    // Compare two jobs read back: the same result as from records.
    const again = compareJobs([await readJob(join(jobs, 'oracle')), await readJob(join(jobs, 'partial'))], {
      seed: 1,
    });
    expect(again.comparisons[0]?.p).toBe(0.125);
  });
});
