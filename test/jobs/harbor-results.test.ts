/**
 * What `berth run` writes for Harbor's and the SWE-bench harness's tools, on the bundled
 * sample (examples/swe-dockerless.jsonl): the job's `result.json` with Harbor's
 * `stats.evals`, `verifier/reward.txt` in SWE-bench trials, snake_case trial files,
 * durations in milliseconds, `swebench-report.json`, and resuming a job written before.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { harborJobStats, harborPassAtK, harborPassAtKs } from '../../src/jobs/harbor-stats.ts';
import { runReportSchema } from '../../src/reporters/json.ts';
import { swebenchReportSchema } from '../../src/reporters/swebench-report.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
const sample = join(examples, 'swe-dockerless.jsonl');
const sampleRows = readFileSync(sample, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown> & { instance_id: string; patch: string });
const control = (file: string, id: string) =>
  readFileSync(join(examples, 'predictions', file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { instance_id: string; model_patch: string })
    .find((p) => p.instance_id === id)?.model_patch as string;

function berth(args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
const readJson = <T = Record<string, unknown>>(file: string) => JSON.parse(readFileSync(file, 'utf8')) as T;

interface JobFile {
  id: string;
  berth: { job_name: string };
  stats: {
    n_completed_trials: number;
    n_errored_trials: number;
    evals: Record<
      string,
      {
        n_trials: number;
        n_errors: number;
        metrics: Record<string, number>[];
        pass_at_k: Record<string, number>;
        reward_stats: Record<string, Record<string, string[]>>;
        exception_stats: Record<string, string[]>;
      }
    >;
  };
}

/** Every key of a JSON value, with its path; skips the values of `id`-like keys (test names). */
function keysOf(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keysOf(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keysOf(v, `${path}.${k}`)]);
  return [];
}
/** Every `*duration_sec` number of a JSON value. */
function durations(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(durations);
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) =>
      /duration_sec$/.test(k) && typeof v === 'number' ? [v] : durations(v),
    );
  return [];
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('job files for Harbor and SWE-bench tools (bundled sample)', () => {
  it('oracle, 2 attempts: stats.evals with pass@k, reward.txt, snake_case, ms durations, swebench-report.json', async () => {
    const jobs = await temp.make('berth-harbor-');
    const run = berth([
      'run',
      '-p',
      sample,
      '-l',
      '2',
      '-k',
      '2',
      '--jobs-dir',
      jobs,
      '--job-name',
      'g',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const jobDir = join(jobs, 'g');
    const job = readJson<JobFile>(join(jobDir, 'result.json'));
    expect(job.id).toMatch(UUID);
    expect(job.berth.job_name).toBe('g');
    const trials = [
      'berth__csvline-1__1',
      'berth__csvline-1__2',
      'berth__durations-1__1',
      'berth__durations-1__2',
    ];
    expect(job.stats).toMatchObject({ n_completed_trials: 4, n_errored_trials: 0 });
    // The oracle names no model: Harbor's key is <agent>__<dataset>.
    expect(Object.keys(job.stats.evals)).toEqual(['oracle__swe-dockerless']);
    expect(job.stats.evals['oracle__swe-dockerless']).toEqual({
      n_trials: 4,
      n_errors: 0,
      metrics: [{ mean: 1 }],
      pass_at_k: { '2': 1 },
      reward_stats: { reward: { '1': trials } },
      exception_stats: {},
    });
    for (const trial of trials) {
      const dir = join(jobDir, trial);
      expect(readFileSync(join(dir, 'verifier', 'reward.txt'), 'utf8')).toBe('1\n');
      const result = readJson(join(dir, 'result.json'));
      const config = readJson(join(dir, 'config.json'));
      expect(result.agent_result).toEqual({});
      expect(result.agent_info).toEqual({ name: 'oracle', version: expect.any(String), model_info: null });
      expect(config.agent).toMatchObject({ name: 'oracle', model_name: null });
      expect(result.config).toEqual(config);
      const keys = [...keysOf(result), ...keysOf(config)].map((k) => k.split('.').pop() as string);
      expect(keys.filter((k) => /[A-Z]/.test(k) && !/^(FAIL|PASS)_TO_PASS$/.test(k))).toEqual([]);
      const seconds = durations(result);
      expect(seconds.length).toBeGreaterThanOrEqual(2); // berth.duration_sec and the verifier's
      for (const s of seconds) expect(Math.round(s * 1000) / 1000).toBe(s);
    }
    expect(readJson(join(jobDir, 'config.json'))).toMatchObject({
      n_attempts: 2,
      agents: [{ name: 'oracle', model_name: null }],
      datasets: [{ path: sample, task_names: null, exclude_task_names: null, n_tasks: 2 }],
      tasks: [],
    });
    const report = runReportSchema.parse(JSON.parse(run.stdout));
    for (const s of [report.duration_sec, ...report.trials.map((t) => t.duration_sec)])
      expect(Math.round(s * 1000) / 1000).toBe(s);
    const harness = swebenchReportSchema.parse(readJson(join(jobDir, 'swebench-report.json')));
    expect(report.swebench_report).toEqual(harness);
    expect(harness).toMatchObject({
      total_instances: 2,
      submitted_instances: 2,
      completed_instances: 2,
      resolved_instances: 2,
      unresolved_instances: 0,
      empty_patch_instances: 0,
      error_instances: 0,
      resolved_ids: ['berth__csvline-1', 'berth__durations-1'],
      schema_version: 2,
      berth_attempt: 1,
    });
  });

  it('predictions of every kind: rewards 1/0 by trial, exceptions by type, and the harness categories', async () => {
    const dir = await temp.make('berth-harbor-');
    const [csvline, durationsRow, intervals, toposort] = sampleRows as [
      (typeof sampleRows)[0],
      (typeof sampleRows)[0],
      (typeof sampleRows)[0],
      (typeof sampleRows)[0],
    ];
    // A second csvline instance (for an unresolved trial) and a toposort whose test command
    // prints nothing and fails (an invalid log: error, with an exception).
    const csvline2 = { ...csvline, instance_id: 'berth__csvline-2' };
    const broken = {
      ...toposort,
      dockerless: { ...(toposort.dockerless as object), test_cmd: 'exit 3 # {tests}' },
    };
    const dataset = join(dir, 'swe-dockerless.jsonl');
    writeFileSync(
      dataset,
      [csvline, csvline2, durationsRow, intervals, broken].map((r) => JSON.stringify(r)).join('\n'),
    );
    const predictions = join(dir, 'preds.jsonl');
    const prediction = (id: string, patch: string) =>
      JSON.stringify({ instance_id: id, model_name_or_path: 'team/mix', model_patch: patch });
    writeFileSync(
      predictions,
      [
        prediction('berth__csvline-1', csvline.patch),
        prediction('berth__csvline-2', control('partial.jsonl', 'berth__csvline-1')),
        prediction('berth__durations-1', ''),
        prediction('berth__toposort-1', toposort.patch),
      ].join('\n'),
    );
    const args = ['run', '-p', dataset, '-a', 'predictions', '--predictions', predictions];
    const run = berth([...args, '--jobs-dir', dir, '--job-name', 'p', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = runReportSchema.parse(JSON.parse(run.stdout));
    expect(report.trials.map((t) => [t.instance_id, t.status])).toEqual([
      ['berth__csvline-1', 'resolved'],
      ['berth__csvline-2', 'unresolved'],
      ['berth__durations-1', 'empty_patch'],
      ['berth__toposort-1', 'error'],
    ]);
    const error = report.trials[3]?.exception_type as string;
    expect(error).toBe('VerifierOutputParseError'); // an invalid log, as Harbor names it
    const job = readJson<JobFile>(join(dir, 'p', 'result.json'));
    // Harbor's key as JobStats.format_agent_evals_key writes it: the model name as it is.
    expect(Object.keys(job.stats.evals)).toEqual(['predictions__team/mix__swe-dockerless']);
    expect(job.stats.evals['predictions__team/mix__swe-dockerless']).toEqual({
      n_trials: 4,
      n_errors: 1,
      metrics: [{ mean: 0.25 }],
      pass_at_k: {},
      reward_stats: {
        reward: {
          '1': ['berth__csvline-1__1'],
          '0': ['berth__csvline-2__1', 'berth__durations-1__1', 'berth__toposort-1__1'],
        },
      },
      exception_stats: { [error]: ['berth__toposort-1__1'] },
    });
    expect(job.stats).toMatchObject({ n_completed_trials: 4, n_errored_trials: 1 });
    const reward = (trial: string) => readFileSync(join(dir, 'p', trial, 'verifier', 'reward.txt'), 'utf8');
    expect(reward('berth__csvline-1__1')).toBe('1\n');
    expect(reward('berth__csvline-2__1')).toBe('0\n');
    expect(reward('berth__durations-1__1')).toBe('0\n');
    expect(reward('berth__toposort-1__1')).toBe('0\n');
    expect(readJson(join(dir, 'p', 'swebench-report.json'))).toEqual({
      total_instances: 5,
      submitted_instances: 4,
      completed_instances: 2,
      resolved_instances: 1,
      unresolved_instances: 1,
      empty_patch_instances: 1,
      error_instances: 1,
      completed_ids: ['berth__csvline-1', 'berth__csvline-2'],
      incomplete_ids: ['berth__intervals-1'],
      empty_patch_ids: ['berth__durations-1'],
      submitted_ids: ['berth__csvline-1', 'berth__csvline-2', 'berth__durations-1', 'berth__toposort-1'],
      resolved_ids: ['berth__csvline-1'],
      unresolved_ids: ['berth__csvline-2'],
      error_ids: ['berth__toposort-1'],
      schema_version: 2,
    });
  });
});

describe('Harbor pass@k', () => {
  const trial = (task: string, n: number, reward: number | null) =>
    ({
      task_name: task,
      trial_name: `${task}__${n}`,
      source: 'ds',
      agent_info: { name: 'a', version: '1', model_info: null },
      verifier_result: reward === null ? null : { rewards: { reward } },
      exception_info: null,
    }) as unknown as TrialResult;

  it('ks are {2, 4, 8, ...} and {5, 10, 15, ...} up to the fewest trials of a task', () => {
    expect(harborPassAtKs(1)).toEqual([]);
    expect(harborPassAtKs(3)).toEqual([2]);
    expect(harborPassAtKs(10)).toEqual([2, 4, 5, 8, 10]);
    expect(harborPassAtKs(20)).toEqual([2, 4, 5, 8, 10, 15, 16, 20]);
  });

  it('averages the unbiased estimator over tasks; a missing reward is 0; non-binary rewards give none', () => {
    // a: 1 of 3 correct (pass@2 = 1 - C(2,2)/C(3,2) = 2/3); b: 3 of 4 (pass@2 = 1), fewest 3.
    const results = [
      trial('a', 1, 1),
      trial('a', 2, 0),
      trial('a', 3, null),
      ...[1, 2, 3].map((n) => trial('b', n, 1)),
      trial('b', 4, 0),
    ];
    expect(harborPassAtK(results)['2']).toBeCloseTo(5 / 6, 12);
    expect(Object.keys(harborPassAtK(results))).toEqual(['2']);
    expect(harborPassAtK([...results, trial('c', 1, 0.5), trial('c', 2, 1), trial('c', 3, 1)])).toEqual({});
    const stats = harborJobStats(results).evals.a__ds;
    expect(stats?.n_trials).toBe(6);
    expect(stats?.metrics).toEqual([{ mean: 4 / 7 }]);
  });
});
