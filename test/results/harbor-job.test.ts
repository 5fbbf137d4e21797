import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { readJob } from '../../src/results/read-job.ts';
import { summarize } from '../../src/results/summary.ts';
import { readTrialDetails, VIEWER_LIMITS } from '../../src/results/trial-details.ts';
import { EVENTS_SCHEMA_VERSION } from '../../src/trials/events.ts';
import { dataDir, fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const harborJob = join(fixturesDir, 'report', 'harbor-job');
// Harbor's schemas sit in shared/reference beside shared/data (BERTH_DATA, default ../shared/data).
const schemas = join(dataDir, '..', 'reference', 'harbor-schemas');
const schema = (name: string) => JSON.parse(readFileSync(join(schemas, `${name}.schema.json`), 'utf8'));

describe('the fixtures are what Harbor writes', () => {
  it('the trial results, the job result and the trajectory validate against Harbor schemas', (ctx) => {
    if (!existsSync(schemas)) ctx.skip(`Harbor's schemas are not at ${schemas}`);
    const ajv = new Ajv({ strict: false, allErrors: true });
    const trial = ajv.compile(schema('TrialResult'));
    for (const name of ['calc__AbC1234', 'calc-json__XyZ9876']) {
      const valid = trial(JSON.parse(readFileSync(join(harborJob, name, 'result.json'), 'utf8')));
      expect(trial.errors ?? []).toEqual([]);
      expect(valid).toBe(true);
    }
    const job = ajv.compile(schema('JobResult'));
    expect(job(JSON.parse(readFileSync(join(harborJob, 'result.json'), 'utf8')))).toBe(true);
    const trajectory = ajv.compile(schema('Trajectory'));
    expect(trajectory(JSON.parse(readFileSync(join(fixturesDir, 'report', 'trajectory.json'), 'utf8')))).toBe(
      true,
    );
  });
});

describe('a job Harbor wrote', () => {
  it('is read with its outcomes, rewards, tokens and costs; an agent timeout names its phase', async () => {
    const job = await readJob(harborJob);
    expect(job).toMatchObject({
      writer: 'harbor',
      agent: 'terminus-2',
      model: 'gpt-5',
      dataset: 'tasks',
      running: false,
    });
    expect(job.trials.map((t) => [t.name, t.outcome, t.why])).toEqual([
      ['calc__AbC1234', 'resolved', 'reward 1'],
      [
        'calc-json__XyZ9876',
        'errored',
        'AgentTimeoutError in agent: Agent execution timed out after 60.0 seconds; reward 0, tests_passed 1',
      ],
    ]);
    const summary = summarize(job.trials);
    expect(summary.tokens).toEqual({ input: 5200, cache: 1000, output: 640 });
    expect(summary.cost_usd).toBeCloseTo(0.021, 10);
    expect(summary.mean_rewards).toEqual({ reward: 0.5, tests_passed: 0.5 });
    expect(summary.errors).toEqual([{ type: 'AgentTimeoutError', count: 1, trials: ['calc-json__XyZ9876'] }]);
    expect(job.trials[0]?.phases).toEqual({ environment: 15, agent_setup: 10, agent: 40, verifier: 15 });
    const details = await readTrialDetails(harborJob, 'calc-json__XyZ9876', VIEWER_LIMITS);
    expect(details?.instruction_source).toBe('the trajectory');
    expect(details?.reward_files.map((f) => f.path)).toEqual(['verifier/reward.json']);
    expect(details?.logs.map((f) => f.path)).toEqual(['verifier/test-stdout.txt', 'agent/terminus-2.txt']);
    expect(details?.exception?.traceback).toContain('single_step.py');
  });
});

describe('a job that is running, from its event log', () => {
  it('trials started and not ended are running, in the phase the log names; the planned ones pending', async () => {
    const dir = join(await temp.make('berth-events-'), 'live');
    mkdirSync(dir);
    cpSync(join(harborJob, 'calc__AbC1234'), join(dir, 'calc__1'), { recursive: true });
    const resolved = JSON.parse(readFileSync(join(dir, 'calc__1', 'result.json'), 'utf8'));
    writeFileSync(
      join(dir, 'calc__1', 'result.json'),
      JSON.stringify({ ...resolved, trial_name: 'calc__1' }),
    );
    mkdirSync(join(dir, 'calc-json__1'));
    writeFileSync(
      join(dir, 'calc-json__1', 'config.json'),
      JSON.stringify({ task_name: 'calc-json', attempt: 1 }),
    );
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ source: 'tasks', berth_trials: ['calc__1', 'calc-json__1', 'extra__1'] }),
    );
    writeFileSync(
      join(dir, 'result.json'),
      JSON.stringify({
        id: 'x',
        started_at: '2026-11-30T12:00:00Z',
        finished_at: null,
        stats: {},
        berth_version: 't',
      }),
    );
    // The lock of a live process (this test's own).
    writeFileSync(join(dir, '.berth.lock'), `${process.pid}\n`);
    const base = { v: EVENTS_SCHEMA_VERSION, time: '2026-11-30T12:00:00.000Z', job: 'live' };
    const agent = { name: 'oracle', version: '1', model: null };
    const lines = [
      { ...base, type: 'job-start', job_id: 'x', n_trials: 3, berth_version: 't' },
      { ...base, type: 'trial-start', trial: 'calc__1', task: 'calc', attempt: 1, agent },
      { ...base, type: 'phase-start', trial: 'calc__1', phase: 'environment' },
      {
        ...base,
        type: 'trial-end',
        trial: 'calc__1',
        task: 'calc',
        attempt: 1,
        status: 'resolved',
        resolved: true,
        rewards: { reward: 1 },
        exception: null,
        duration_sec: 80,
        reused: false,
      },
      { ...base, type: 'trial-start', trial: 'calc-json__1', task: 'calc-json', attempt: 1, agent },
      { ...base, type: 'phase-start', trial: 'calc-json__1', phase: 'environment' },
      { ...base, type: 'phase-start', trial: 'calc-json__1', phase: 'verifier' },
    ].map((event) => JSON.stringify(event));
    // A kill mid-write leaves half a line: it is skipped.
    writeFileSync(join(dir, 'events.jsonl'), `${lines.join('\n')}\n{"v":1,"type":"phase-st`);
    const job = await readJob(dir);
    expect(job.running).toBe(true);
    expect(job.has_events).toBe(true);
    expect(job.trials.map((t) => [t.name, t.outcome, t.why])).toEqual([
      ['calc__1', 'resolved', 'reward 1'],
      ['calc-json__1', 'running', 'running (verifier)'],
      ['extra__1', 'pending', 'not started'],
    ]);
    // The same folder once no process holds its lock: not running; the cut-off trial is shown as such.
    writeFileSync(join(dir, '.berth.lock'), '999999999\n');
    const stopped = await readJob(dir);
    expect(stopped.running).toBe(false);
    expect(stopped.trials.map((t) => t.outcome)).toEqual(['resolved', 'cancelled']);
  });
});
