import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { OracleAgent } from '../../src/agents/oracle.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { runJob } from '../../src/jobs/job.ts';
import { globMatcher, planTrials } from '../../src/jobs/plan.ts';
import type { Task } from '../../src/tasks/task.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { SwebenchVerifier } from '../../src/verifiers/swebench.ts';
import { statusLinesParser } from '../helpers/status-lines-parser.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { shellTask } from '../trials/shell-task.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const base = {
  providers: [new LocalEnvironmentProvider()],
  verifiers: [new SwebenchVerifier({ parsers: [statusLinesParser] })],
  source: 'shell',
};

const readJson = async <T>(path: string) => JSON.parse(await readFile(path, 'utf8')) as T;

describe('planTrials', () => {
  const named = (name: string) => ({ name }) as Task;
  const tasks = ['django__django-1', 'django__django-2', 'sympy__sympy-1', 'astropy__astropy-1'].map(named);

  it('filters by include/exclude globs, limits, and repeats attempts in order', () => {
    const plan = planTrials(tasks, { include: ['django__*', 'sympy__*'], exclude: ['*-2'], attempts: 2 });
    expect(plan.map((p) => p.trialName)).toEqual([
      'django__django-1__1',
      'django__django-1__2',
      'sympy__sympy-1__1',
      'sympy__sympy-1__2',
    ]);
    expect(planTrials(tasks, { limit: 2 }).map((p) => p.task.name)).toEqual([
      'django__django-1',
      'django__django-2',
    ]);
  });

  it('compiles globs with ?, classes and literal dots', () => {
    expect(globMatcher('a?c.[0-9]')('abc.5')).toBe(true);
    expect(globMatcher('a?c.[0-9]')('abcx5')).toBe(false);
    expect(globMatcher('[!a]*')('bcd')).toBe(true);
    expect(globMatcher('[!a]*')('abc')).toBe(false);
    // As fnmatch: `*` crosses `/`, braces are literal, a leading `!` is a character.
    expect(globMatcher('django*')('django/django-1')).toBe(true);
    expect(globMatcher('a{b,c}')('ab')).toBe(false);
    expect(globMatcher('!x')('!x')).toBe(true);
  });

  it('gives trials safe, unique folder names', () => {
    const plan = planTrials([named('a/b c'), named('a_b_c')]);
    expect(plan.map((p) => p.trialName)).toEqual(['a_b_c__1', 'a_b_c__1_2']);
  });
});

describe('runJob', () => {
  it('writes the jobs folder, resumes finished trials, and reruns what no longer matches', async () => {
    const jobsDir = await temp.make('berth-jobs-');
    const tasks = [await shellTask({ name: 'shell__a-1' }), await shellTask({ name: 'shell__b-1' })];
    const plan = planTrials(tasks, { attempts: 2 });
    const first = await runJob({
      ...base,
      jobsDir,
      jobName: 'j',
      plan,
      agent: new OracleAgent(),
      concurrency: 2,
    });
    expect(first.total).toBe(4);
    expect(first.resolved).toBe(4);
    expect(first.reused).toBe(0);
    const jobDir = join(jobsDir, 'j');
    const config = await readJson<Record<string, unknown>>(join(jobDir, 'config.json'));
    expect(config).toMatchObject({
      job_name: 'j',
      n_attempts: 2,
      n_concurrent_trials: 2,
      agents: [{ name: 'oracle', model_name: null }],
      berth: { n_trials: 4 },
    });
    const jobResult = await readJson<{
      finished_at: string;
      stats: Record<string, number>;
      berth: Record<string, number>;
    }>(join(jobDir, 'result.json'));
    expect(jobResult.finished_at).toBeTruthy();
    expect(jobResult.stats).toMatchObject({
      n_completed_trials: 4,
      n_errored_trials: 0,
      n_pending_trials: 0,
      n_running_trials: 0,
    });
    expect(jobResult.berth).toMatchObject({ n_resolved_trials: 4 });
    const trial = await readJson<TrialResult>(join(jobDir, 'shell__a-1__2', 'result.json'));
    expect(trial).toMatchObject({
      task_name: 'shell__a-1',
      trial_name: 'shell__a-1__2',
      berth: { attempt: 2, status: 'resolved' },
    });
    expect(existsSync(join(jobDir, 'shell__a-1__2', 'verifier', 'test-output.txt'))).toBe(true);

    // Same job again: every trial is kept, nothing runs.
    const again = await runJob({ ...base, jobsDir, jobName: 'j', plan, agent: new OracleAgent() });
    expect(again.reused).toBe(4);
    expect((await readJson<TrialResult>(join(jobDir, 'shell__a-1__2', 'result.json'))).id).toBe(trial.id);

    // A result made by another berth version, or a different patch, runs again.
    const edited = await readJson<TrialResult>(join(jobDir, 'shell__b-1__1', 'result.json'));
    edited.berth.version = '0.0.0-old';
    await writeFile(join(jobDir, 'shell__b-1__1', 'result.json'), JSON.stringify(edited));
    const third = await runJob({ ...base, jobsDir, jobName: 'j', plan, agent: new OracleAgent() });
    expect(third.reused).toBe(3);
    // A changed task (here its FAIL_TO_PASS list) runs again.
    const changed = await shellTask({ name: 'shell__a-1' });
    if (changed.verifier.kind === 'swebench') changed.verifier.passToPass = [];
    const fifth = await runJob({
      ...base,
      jobsDir,
      jobName: 'j',
      plan: planTrials([changed], { attempts: 2 }),
      agent: new OracleAgent(),
    });
    expect(fifth.reused).toBe(0);
    expect(fifth.trials.map((t) => t.berth.PASS_TO_PASS)).toEqual([
      { passed: 0, total: 0 },
      { passed: 0, total: 0 },
    ]);
    const other: Agent = {
      info: { name: 'oracle', version: 'x' },
      plannedPatch: () => '',
      run: async () => ({ patch: '' }),
    };
    const fourth = await runJob({ ...base, jobsDir, jobName: 'j', plan, agent: other });
    expect(fourth.reused).toBe(0);
    expect(fourth.trials.every((t) => t.berth.status === 'empty_patch')).toBe(true);
  });

  it('stops cleanly on abort: finished trials kept, running ones cancelled, pending ones not started; resume reruns the rest', async () => {
    const jobsDir = await temp.make('berth-jobs-');
    const quick = await shellTask({ name: 'shell__quick-1' });
    const slow = await shellTask({ name: 'shell__slow-1', testCommand: 'sleep 120' });
    const pending = await shellTask({ name: 'shell__pending-1' });
    const plan = planTrials([quick, slow, pending]);
    const controller = new AbortController();
    const summary = await runJob({
      ...base,
      jobsDir,
      jobName: 'c',
      plan,
      agent: new OracleAgent(),
      signal: controller.signal,
      onTrialStart: (t) => {
        if (t.task.name === 'shell__slow-1') setTimeout(() => controller.abort(), 1500);
      },
    });
    expect(summary.cancelled).toBe(true);
    expect(summary.trials.map((t) => [t.task_name, t.berth.status])).toEqual([
      ['shell__quick-1', 'resolved'],
      ['shell__slow-1', 'cancelled'],
    ]);
    expect(summary.trials[1]?.exception_info?.exception_type).toBe('CancelledError');
    expect(existsSync(join(jobsDir, 'c', 'shell__pending-1__1'))).toBe(false);
    const stats = (await readJson<{ stats: Record<string, number> }>(join(jobsDir, 'c', 'result.json')))
      .stats;
    expect(stats).toMatchObject({ n_cancelled_trials: 1, n_pending_trials: 1 });

    const resumed = await runJob({
      ...base,
      jobsDir,
      jobName: 'c',
      plan: planTrials([quick, pending]),
      agent: new OracleAgent(),
    });
    expect(resumed.reused).toBe(1);
    expect(resumed.resolved).toBe(2);
  });
});
