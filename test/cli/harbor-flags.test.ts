/**
 * `harbor run`'s command line on `berth run` (issue 17): Harbor's spellings, `-c` (Harbor's
 * JobConfig), `-q`, `--debug`, `-r` with `--retry-include/--retry-exclude`,
 * `--disable-verification`, `-e`, and the usage errors. Real runs of the bundled mini rows
 * (local sandbox) through the real CLI.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readJobConfig } from '../../src/cli/harbor-flags.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const mini = join(fixturesDir, 'swebench', 'mini.jsonl');

function berth(args: string[], cwd?: string) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1' },
    ...(cwd ? { cwd } : {}),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const trialFolders = (jobDir: string) =>
  readdirSync(jobDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();

describe("Harbor's flags on berth run", () => {
  it("Harbor's spellings: --n-attempts, --n-concurrent, -o, --include-task-name, --n-tasks, -q", async () => {
    const dir = await temp.make('berth-harbor-flags-');
    const jobs = join(dir, 'out');
    const run = berth([
      'run',
      '-p',
      mini,
      '-a',
      'oracle',
      '--n-attempts',
      '2',
      '--n-concurrent',
      '2',
      '-o',
      jobs,
      '--job-name',
      'h',
      '--include-task-name',
      'mini__stats*',
      '--n-tasks',
      '1',
      '-q',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // -q: no line per trial, the summary only.
    expect(run.stdout).not.toMatch(/^mini__stats-1 /m);
    expect(run.stdout).toMatch(/^resolved 2\/2 /m);
    expect(trialFolders(join(jobs, 'h'))).toEqual(['mini__stats-1__1', 'mini__stats-1__2']);
    const config = json(join(jobs, 'h', 'config.json'));
    expect(config).toMatchObject({
      n_attempts: 2,
      n_concurrent_trials: 2,
      jobs_dir: jobs,
      quiet: true,
      datasets: [{ path: mini, task_names: ['mini__stats*'], n_tasks: 1 }],
      agents: [{ name: 'oracle', model_name: null }],
    });
  });

  it('-c reads a Harbor JobConfig (YAML); flags beside it win; --disable-verification runs no verifier', async () => {
    const dir = await temp.make('berth-harbor-config-');
    const file = join(dir, 'job.yaml');
    await writeFile(
      file,
      [
        'job_name: from-config',
        `jobs_dir: ${join(dir, 'jobs')}`,
        'n_attempts: 1',
        'n_concurrent_trials: 1',
        'agent_setup_timeout_multiplier: 2.5',
        'agents:',
        '  - name: oracle',
        'datasets:',
        `  - path: ${mini}`,
        '    task_names: ["mini__range*"]',
        'verifier:',
        '  disable: true',
        'retry:',
        '  max_retries: 0',
        '',
      ].join('\n'),
    );
    const run = berth(['run', '-c', file, '--job-name', 'from-flags']);
    expect(run.code, run.stderr).toBe(0);
    const jobDir = join(dir, 'jobs', 'from-flags');
    expect(trialFolders(jobDir)).toEqual(['mini__range-1__1']);
    const config = json(join(jobDir, 'config.json'));
    expect(config).toMatchObject({
      job_name: 'from-flags',
      agent_setup_timeout_multiplier: 2.5,
      verifier: { disable: true },
    });
    const trial = json(join(jobDir, 'mini__range-1__1', 'result.json'));
    // The oracle's patch was applied, nothing was verified: no reward, not resolved, no exception.
    expect(trial.verifier_result).toBeNull();
    expect(trial.verifier).toBeNull();
    expect(trial.exception_info).toBeNull();
    expect(trial.berth).toMatchObject({ status: 'unresolved', resolved: false });
    expect(trial.berth.note).toContain('not verified (--disable-verification)');
    expect(trial.config.verifier.disable).toBe(true);
  });

  it('-r retries an exception type Harbor retries, not one --retry-exclude names; n_retries counted', async () => {
    const dir = await temp.make('berth-harbor-retry-');
    const row = JSON.parse(readFileSync(mini, 'utf8').split('\n')[0] as string);
    row.dockerless.install = 'echo broken install >&2; exit 3';
    const dataset = join(dir, 'broken.jsonl');
    await writeFile(dataset, `${JSON.stringify(row)}\n`);
    const retried = berth(['run', '-p', dataset, '-a', 'nop', '-o', dir, '--job-name', 'r', '-r', '1']);
    expect(retried.code, retried.stderr).toBe(0);
    const result = json(join(dir, 'r', 'result.json'));
    const type = json(join(dir, 'r', 'mini__stats-1__1', 'result.json')).exception_info.exception_type;
    expect(retried.stderr).toContain(`mini__stats-1__1: ${type}; running it again in 1 s (retry 1 of 1)`);
    expect(result.stats).toMatchObject({ n_retries: 1, n_completed_trials: 1, n_errored_trials: 1 });
    expect(json(join(dir, 'r', 'config.json')).retry).toMatchObject({
      max_retries: 1,
      include_exceptions: null,
    });

    const excluded = berth([
      'run',
      '-p',
      dataset,
      '-a',
      'nop',
      '-o',
      dir,
      '--job-name',
      'x',
      '-r',
      '1',
      '--retry-exclude',
      type,
    ]);
    expect(excluded.code, excluded.stderr).toBe(0);
    expect(excluded.stderr).not.toContain('running it again');
    expect(json(join(dir, 'x', 'result.json')).stats.n_retries).toBe(0);
    expect(json(join(dir, 'x', 'config.json')).retry.exclude_exceptions).toEqual([type]);
  });

  it('--debug prints the job events as log lines on stderr', async () => {
    const dir = await temp.make('berth-harbor-debug-');
    const run = berth([
      'run',
      '-p',
      mini,
      '-a',
      'oracle',
      '-l',
      '1',
      '-o',
      dir,
      '--job-name',
      'd',
      '--debug',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      / INFO \[mini__stats-1__1\] trial started: task mini__stats-1, attempt 1, agent oracle/,
    );
    expect(run.stderr).toMatch(/ INFO \[mini__stats-1__1\] command \(verifier\): .* -> exit \d+ in /);
    expect(readFileSync(join(dir, 'd', 'job.log'), 'utf8')).toMatch(
      /\[mini__stats-1__1\] trial ended: resolved/,
    );
  });

  it('usage: no arguments, a bad flag, -e daytona, a TOML -c, a JobConfig berth cannot run', async () => {
    const none = berth([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: berth [options] [command]');
    const bad = berth(['run', '-p', mini, '--n-attempt', '2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      "error: unknown option '--n-attempt'",
      '(Did you mean --attempts?)',
      "(add --help for the command's options)",
    ]);
    const cloud = berth(['run', '-p', mini, '-e', 'daytona']);
    expect(cloud.code).toBe(2);
    expect(cloud.stderr.trim()).toBe(
      "berth: -e daytona: berth runs trials in Docker or in its local sandbox (-e docker, -e local); Harbor's daytona environment is not part of berth",
    );
    const dir = await temp.make('berth-harbor-bad-config-');
    const toml = join(dir, 'berth.toml');
    await writeFile(toml, '[docker.image_map]\n"a" = "b"\n');
    const old = berth(['run', '-p', mini, '-c', toml]);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('is given with --settings');
    const two = join(dir, 'two.json');
    await writeFile(
      two,
      JSON.stringify({ agents: [{ name: 'oracle' }, { name: 'nop' }], datasets: [{ path: mini }] }),
    );
    const refused = berth(['run', '-c', two]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(
      `berth: ${two}: agents[1]: berth runs one agent per job (oracle and nop): run a job per agent`,
    );
  });
});

describe('readJobConfig', () => {
  it("maps Harbor's JobConfig fields to berth run's options and refuses what berth cannot do", async () => {
    const dir = await temp.make('berth-jobconfig-');
    const file = join(dir, 'job.json');
    await writeFile(
      file,
      JSON.stringify({
        jobs_dir: 'jobs',
        n_attempts: 3,
        timeout_multiplier: 2,
        environment_build_timeout_multiplier: 4,
        orchestrator: { n_concurrent_trials: 5, quiet: true },
        retry: { max_retries: 2, include_exceptions: ['AgentTimeoutError'], min_wait_sec: 0.5 },
        environment: {
          type: 'docker',
          force_build: true,
          delete: false,
          override_cpus: 2,
          override_memory_mb: 2048,
        },
        verifier: { env: ['OPENAI_BASE_URL=http://127.0.0.1:1/v1'] },
        agents: [
          {
            name: 'claude-code',
            model_name: 'anthropic/claude-opus-4-1',
            kwargs: { max_turns: 3 },
            env: { A: 'b' },
          },
          { name: 'claude-code', model_name: 'anthropic/claude-sonnet-4-5' },
        ],
        tasks: [{ path: 'tasks/one' }],
        artifacts: ['/app/out.txt', { source: '/logs/x', destination: 'x' }],
        metrics: [{ type: 'mean' }],
      }),
    );
    const read = await readJobConfig(file);
    expect(read.options).toMatchObject({
      jobsDir: 'jobs',
      attempts: '3',
      timeoutMultiplier: '2',
      environmentBuildTimeoutMultiplier: '4',
      concurrency: '5',
      quiet: true,
      forceBuild: true,
      delete: false,
      overrideCpus: '2',
      overrideMemoryMb: '2048',
      agent: 'claude-code',
      model: ['anthropic/claude-opus-4-1', 'anthropic/claude-sonnet-4-5'],
      ak: ['max_turns=3'],
      ae: ['A=b'],
    });
    expect(read.options.path).toBe(join(process.cwd(), 'tasks', 'one'));
    expect(read.retry).toEqual({
      max_retries: 2,
      include_exceptions: ['AgentTimeoutError'],
      min_wait_sec: 0.5,
    });
    expect(read.verifierEnv).toEqual({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(read.artifacts).toEqual(['/app/out.txt', { source: '/logs/x', destination: 'x' }]);
    await writeFile(
      file,
      JSON.stringify({ datasets: [{ name: 'terminal-bench', version: '2.0', registry_path: 'r.json' }] }),
    );
    expect((await readJobConfig(file)).options).toMatchObject({
      dataset: 'terminal-bench@2.0',
      registryPath: join(process.cwd(), 'r.json'),
    });

    for (const [config, field] of [
      [{ environment: { type: 'modal' } }, 'environment.type'],
      [{ metrics: [{ type: 'max' }] }, 'metrics'],
      [{ environment: { mounts: [{ source: '/a', target: '/b' }] } }, 'environment.mounts'],
      [{ plugins: [{ import_path: 'x:Y' }] }, 'plugins'],
    ] as const) {
      await writeFile(file, JSON.stringify(config));
      await expect(readJobConfig(file)).rejects.toThrow(`${file}: ${field}: `);
    }
  });
});
