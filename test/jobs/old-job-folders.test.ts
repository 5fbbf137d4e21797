/**
 * Job folders berth wrote at commit 4826c82, before its job files became Harbor's models
 * (test/fixtures/jobs-4826c82/): `berth report` / the viewer still read them, and `berth run`
 * resumes them, keeping their trials and bringing every file to Harbor's models (checked after
 * the test by test/helpers/harbor-job-check.setup.ts, and here).
 */
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readJob } from '../../src/results/read-job.ts';
import { readTrialDetails, VIEWER_LIMITS } from '../../src/results/trial-details.ts';
import { fixturesDir } from '../helpers/data.ts';
import { harborJobFolderProblems, notHarborJobFolder } from '../helpers/harbor-job-check.ts';
import { berth, sample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(fixturesDir, 'jobs-4826c82');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/**
 * The fixture jobs copied to a jobs folder, the dataset each job's config.json names pointed at
 * this repository (as if the user had run them here). Trial results are left byte for byte: the
 * job's state file holds their sha256, and a changed result is not kept on resume.
 */
async function copyOldJobs(): Promise<string> {
  const jobs = await temp.make('berth-old-jobs-');
  cpSync(fixtures, jobs, { recursive: true });
  for (const job of readdirSync(jobs, { withFileTypes: true })) {
    if (!job.isDirectory()) continue;
    const config = join(jobs, job.name, 'config.json');
    writeFileSync(config, readFileSync(config, 'utf8').replaceAll('/tmp/harbor1-base/', repo));
  }
  return jobs;
}

describe('job folders berth wrote at 4826c82', () => {
  it('are read as they were: agent, dataset, outcomes, phases, the trial page', async () => {
    const jobs = await copyOldJobs();
    for (const name of ['sample-oracle', 'sample-nop', 'harbor-oracle', 'steps-nop'])
      notHarborJobFolder(join(jobs, name), 'written by berth at 4826c82, read as it is');
    // They are not Harbor's models (that is what changed): no task_id, the job name as job_id...
    expect(harborJobFolderProblems(join(jobs, 'sample-oracle')).join('\n')).toMatch(/task_id|job_id/);
    const oracle = await readJob(join(jobs, 'sample-oracle'));
    expect(oracle).toMatchObject({
      writer: 'berth',
      agent: 'oracle',
      dataset: 'swe-dockerless',
      running: false,
    });
    expect(oracle.trials.map((t) => [t.name, t.outcome, t.attempt])).toEqual([
      ['berth__csvline-1__1', 'resolved', 1],
      ['berth__csvline-1__2', 'resolved', 2],
      ['berth__durations-1__1', 'resolved', 1],
      ['berth__durations-1__2', 'resolved', 2],
    ]);
    const nop = await readJob(join(jobs, 'sample-nop'));
    expect(nop.trials.map((t) => [t.task, t.status])).toEqual([
      ['berth__csvline-1', 'empty_patch'],
      ['berth__durations-1', 'empty_patch'],
    ]);
    const harbor = await readJob(join(jobs, 'harbor-oracle'));
    expect(harbor.trials.map((t) => [t.task, t.outcome, t.rewards])).toEqual([
      ['calc', 'resolved', { reward: 1 }],
      ['calc-json', 'resolved', { reward: 1, tests_passed: 2 }],
    ]);
    expect(harbor.trials.every((t) => t.phases.environment !== null && t.phases.verifier !== null)).toBe(
      true,
    );
    const steps = await readJob(join(jobs, 'steps-nop'));
    expect(steps.trials.map((t) => [t.task, t.outcome, t.why])).toEqual([
      ['steps-gate', 'failed', 'reward 0, quality 0'],
    ]);
    // The trial page finds the instruction through the old config.json's task_origin.
    const details = await readTrialDetails(join(jobs, 'sample-oracle'), 'berth__csvline-1__1', VIEWER_LIMITS);
    expect(details?.instruction).toBeTruthy();
  });

  it('`berth run` resumes one: every trial kept, every file brought to Harbor models', async () => {
    const jobs = await copyOldJobs();
    const jobDir = join(jobs, 'sample-oracle');
    const ids = Object.fromEntries(
      ['berth__csvline-1__1', 'berth__durations-1__2'].map((t) => [
        t,
        readJson(join(jobDir, t, 'result.json')).id,
      ]),
    );
    const args = ['run', '-p', sample, '-a', 'oracle', '-k', '2', '-l', '2', '--jobs-dir', jobs];
    const run = berth([...args, '--job-name', 'sample-oracle']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^resolved 4\/4 .*\(4 kept from a previous run\)$/m);
    for (const [trial, id] of Object.entries(ids)) {
      const result = readJson(join(jobDir, trial, 'result.json'));
      expect(result.id).toBe(id); // kept, not run again
      expect(result.agent_info).toMatchObject({ name: 'oracle', model_info: null });
      expect(result.task_id).toEqual({ path: sample });
      expect(result.config).toEqual(readJson(join(jobDir, trial, 'config.json')));
      expect(result.agent_setup).toEqual({
        started_at: (result.agent_execution as { started_at: string }).started_at,
        finished_at: (result.agent_execution as { started_at: string }).started_at,
      });
    }
    const config = readJson(join(jobDir, 'config.json'));
    expect(config).toMatchObject({
      n_attempts: 2,
      agents: [{ name: 'oracle' }],
      berth: { source: 'swe-dockerless' },
    });
    expect(existsSync(join(jobDir, 'job.log'))).toBe(true);
    expect(harborJobFolderProblems(jobDir)).toEqual([]);
    // A resumed old nop job too.
    const nop = berth([
      'run',
      '-p',
      sample,
      '-a',
      'nop',
      '-l',
      '2',
      '--jobs-dir',
      jobs,
      '--job-name',
      'sample-nop',
    ]);
    expect(nop.code, nop.stderr).toBe(0);
    expect(nop.stdout).toMatch(/\(2 kept from a previous run\)/);
    expect(harborJobFolderProblems(join(jobs, 'sample-nop'))).toEqual([]);
  });
});
