/** `berth run`, `berth check`, `berth bases build` and `berth clean` on Harbor fixtures, through the CLI. */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { LABELS } from '../../src/environments/docker/labels.ts';
import { BASE_IMAGE, FIXTURES, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const berth = (...args: string[]) =>
  spawnSync('node', [bin, ...args], { encoding: 'utf8', timeout: 240_000 });
const map = ['--image-map', `debian:bookworm-slim=${BASE_IMAGE}`];

describe('berth CLI on Harbor tasks', () => {
  it('a bad task.toml stops the run before any trial: exit 2 naming file, line and key', () => {
    const dir = join(tempDir(), 'calc');
    cpSync(join(FIXTURES, 'tasks', 'calc'), dir, { recursive: true });
    writeFileSync(join(dir, 'task.toml'), '[agent]\ntimeout_sec = 60\n\n[environment]\ncpus = "four"\n');
    const run = berth('run', '-p', dir, '-a', 'oracle', '--jobs-dir', tempDir());
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/task\.toml:5: environment\.cpus/);
    const check = berth('check', '-p', dir);
    expect(check.status).toBe(2);
  });

  it('a bad --image-map is bad usage (exit 2)', () => {
    const run = berth(
      'run',
      '-p',
      join(FIXTURES, 'tasks'),
      '--image-map',
      'no-equals-sign',
      '--jobs-dir',
      tempDir(),
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/expected FROM=TO/);
  });
});

describe.skipIf(skipDocker)(
  'a Harbor dataset with values Harbor coerces and one invalid task (issue 12)',
  () => {
    it('coerced values run with a warning naming the line; the invalid task is listed, the rest run, exit 2', () => {
      const dataset = tempDir();
      for (const name of ['calc', 'calc-coerced', 'calc-bad'])
        cpSync(join(FIXTURES, 'tasks', 'calc'), join(dataset, name), { recursive: true });
      const toml = (name: string) => join(dataset, name, 'task.toml');
      writeFileSync(
        toml('calc-coerced'),
        readFileSync(toml('calc-coerced'), 'utf8')
          .replace('[agent]\ntimeout_sec = 60.0', '[agent]\ntimeout_sec = "120"')
          .replace('allow_internet = false', 'allow_internet = "false"'),
      );
      writeFileSync(
        toml('calc-bad'),
        readFileSync(toml('calc-bad'), 'utf8').replace('cpus = 1', 'cpus = "four"'),
      );
      const jobs = tempDir();
      const run = berth(
        'run',
        '-p',
        dataset,
        '-a',
        'oracle',
        ...map,
        '--jobs-dir',
        jobs,
        '--job-name',
        'mixed',
        '-n',
        '2',
      );
      expect(run.status, run.stderr).toBe(2);
      // The invalid task, with file, line and key, before anything runs; then the summary counts it.
      expect(run.stderr).toMatch(/1 invalid task\(s\) skipped, not run/);
      expect(run.stderr).toMatch(/calc-bad\/task\.toml:22: environment\.cpus: expected a number, got "four"/);
      expect(run.stderr).toMatch(/1 invalid task\(s\) were skipped \(listed above\): calc-bad; exit 2/);
      // The coerced values: a warning on their lines, and the task runs.
      expect(run.stderr).toMatch(
        /calc-coerced\/task\.toml:15: agent\.timeout_sec: "120" is read as 120, as Harbor does/,
      );
      expect(run.stdout).toMatch(/resolved 2\/2/);
      const trials = readdirSync(join(jobs, 'mixed')).filter((d) =>
        existsSync(join(jobs, 'mixed', d, 'result.json')),
      );
      expect(trials.map((d) => d.replace(/__.*$/, '')).sort()).toEqual(['calc', 'calc-coerced']);
      for (const d of trials) {
        const result = JSON.parse(readFileSync(join(jobs, 'mixed', d, 'result.json'), 'utf8'));
        expect(result.verifier_result.rewards).toEqual({ reward: 1 });
      }
      const config = JSON.parse(readFileSync(join(jobs, 'mixed', 'config.json'), 'utf8'));
      expect(JSON.stringify(config)).toContain('calc-bad');
    });
  },
);

describe.skipIf(skipDocker)('berth CLI on Harbor tasks (real engine)', () => {
  it('berth run -p <dataset> -a oracle / nop: rewards 1 / 0, Harbor layout, provenance in every result', () => {
    const jobs = tempDir();
    const oracle = berth(
      'run',
      '-p',
      join(FIXTURES, 'tasks'),
      '-a',
      'oracle',
      ...map,
      '--jobs-dir',
      jobs,
      '--job-name',
      'oracle',
      '-n',
      '2',
    );
    expect(oracle.status, oracle.stderr).toBe(0);
    expect(oracle.stdout).toMatch(/resolved 2\/2/);
    const calc = JSON.parse(readFileSync(join(jobs, 'oracle', 'calc__1', 'result.json'), 'utf8'));
    expect(calc.verifier_result).toEqual({ rewards: { reward: 1 } });
    expect(calc.berth.task_source).toMatchObject({ repository: 'berth/fixtures', license: 'MIT' });
    expect(readFileSync(join(jobs, 'oracle', 'calc__1', 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    expect(readFileSync(join(jobs, 'oracle', 'calc__1', 'agent', 'oracle.txt'), 'utf8')).toContain('solved');
    const json = JSON.parse(readFileSync(join(jobs, 'oracle', 'calc-json__1', 'result.json'), 'utf8'));
    expect(json.verifier_result).toEqual({ rewards: { reward: 1, tests_passed: 2 } });

    const nop = berth(
      'run',
      '-p',
      join(FIXTURES, 'tasks'),
      '-a',
      'nop',
      ...map,
      '--jobs-dir',
      jobs,
      '--job-name',
      'nop',
    );
    expect(nop.status, nop.stderr).toBe(0);
    expect(nop.stdout).toMatch(/resolved 0\/2/);
    const calcNop = JSON.parse(readFileSync(join(jobs, 'nop', 'calc__1', 'result.json'), 'utf8'));
    expect(calcNop.verifier_result).toEqual({ rewards: { reward: 0 } });
    expect(calcNop.exception_info.exception_type).toBe('RewardFileNotFoundError');
  });

  it('per-phase timeout multipliers: the agent timeout shrinks, the verifier still runs', () => {
    const dir = join(tempDir(), 'calc');
    cpSync(join(FIXTURES, 'tasks', 'calc'), dir, { recursive: true });
    writeFileSync(
      join(dir, 'solution', 'solve.sh'),
      '#!/bin/bash\nsed -i "s/a - b/a + b/" /app/calc.py\nsleep 100\n',
    );
    const jobs = tempDir();
    const run = berth(
      'run',
      '-p',
      dir,
      '-a',
      'oracle',
      ...map,
      '--jobs-dir',
      jobs,
      '--job-name',
      'j',
      '--agent-timeout-multiplier',
      '0.05',
    );
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(jobs, 'j', 'calc__1', 'result.json'), 'utf8'));
    expect(result.exception_info.exception_type).toBe('AgentTimeoutError');
    expect(result.verifier_result).toEqual({ rewards: { reward: 1 } });
  });

  it('Ctrl-C stops the run: exit 130, no container of the job left', async () => {
    const dir = join(tempDir(), 'calc');
    cpSync(join(FIXTURES, 'tasks', 'calc'), dir, { recursive: true });
    writeFileSync(join(dir, 'solution', 'solve.sh'), '#!/bin/bash\nsleep 300\n');
    const jobName = `ctrl-c-${process.pid}`;
    const { spawn } = await import('node:child_process');
    const child = spawn('node', [
      bin,
      'run',
      '-p',
      dir,
      '-a',
      'oracle',
      ...map,
      '--jobs-dir',
      tempDir(),
      '--job-name',
      jobName,
    ]);
    const { docker } = await connectDocker();
    const filters = { label: [`${LABELS.job}=${jobName}`] };
    // Wait for the trial's container, then interrupt.
    for (let i = 0; i < 600 && (await docker.listContainers({ filters })).length === 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    expect((await docker.listContainers({ filters })).length).toBe(1);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    for (let i = 0; i < 50 && (await docker.listContainers({ all: true, filters })).length > 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    expect(await docker.listContainers({ all: true, filters })).toEqual([]);
  });

  it('berth check names what a task needs; berth clean removes what a crashed run left', async () => {
    // The image map as every run here uses it: without it the dataset base's own base
    // (debian:bookworm-slim) is missing on a machine where no earlier test built the base.
    const check = berth('check', '-p', join(FIXTURES, 'based', 'tasks'), '--json', ...map);
    expect(check.status, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout);
    // The base is built locally by an earlier test, or named as a dataset base to build.
    expect(report.tasks[0].needs[0]).toMatchObject({ image: 'based/tool:base-extra' });
    expect(['local', 'dataset base']).toContain(report.tasks[0].needs[0].status);
    expect(report.tasks[0].image).toMatch(
      /built from tasks\/tool-1\/environment\/Dockerfile as based\/tool:pr-1/,
    );

    const { docker } = await connectDocker();
    const jobId = `clean-test-${process.pid}`;
    const leftover = await docker.createContainer({
      Image: BASE_IMAGE,
      Cmd: ['sleep', '600'],
      Labels: { [LABELS.managed]: '1', [LABELS.job]: jobId },
    });
    await leftover.start();
    const clean = berth('clean', '--job', jobId);
    expect(clean.status, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/removed 1 container/);
    await expect(leftover.inspect()).rejects.toMatchObject({ statusCode: 404 });
  });
});
