import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runReportSchema } from '../../src/reporters/json.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const mini = join(fixturesDir, 'swebench', 'mini.jsonl');
const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
const rows = readFileSync(mini, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown>);

function berth(args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function tmp(): Promise<string> {
  return temp.make('berth-cli-');
}

describe('berth run end to end (DockerLess fixture: Python/pytest and JS/node:test)', () => {
  it('oracle resolves both instances; --json writes one valid document; results on disk', async () => {
    const jobs = await tmp();
    const run = berth(['run', '-p', mini, '--jobs-dir', jobs, '--job-name', 'gold', '-n', '2', '--json']);
    expect(run.stderr).toContain('resolved 2/2 (100.0%)');
    expect(run.code).toBe(0);
    const report = runReportSchema.parse(JSON.parse(run.stdout));
    expect(report).toMatchObject({ resolved: 2, total: 2, agent: 'oracle', cancelled: false });
    const stats = report.trials.find((t) => t.instance_id === 'mini__stats-1');
    expect(stats).toMatchObject({
      attempt: 1,
      status: 'resolved',
      resolved: true,
      FAIL_TO_PASS: { passed: 3, total: 3 },
      PASS_TO_PASS: { passed: 3, total: 3 },
    });
    const range = report.trials.find((t) => t.instance_id === 'mini__range-1');
    expect(range).toMatchObject({
      status: 'resolved',
      FAIL_TO_PASS: { passed: 1, total: 1 },
      PASS_TO_PASS: { passed: 3, total: 3 },
    });
    for (const file of [
      'config.json',
      'result.json',
      'mini__stats-1__1/result.json',
      'mini__stats-1__1/agent/patch.diff',
      'mini__stats-1__1/verifier/test-output.txt',
    ]) {
      expect(existsSync(join(jobs, 'gold', file))).toBe(true);
    }
  });

  it('predictions: an empty patch and a patch printing forged pytest PASSED lines resolve nothing', async () => {
    const dir = await tmp();
    // The patch leaves the bug and prints pytest-style PASSED lines for the FAIL_TO_PASS tests at import.
    const forged = [
      'diff --git a/mini/stats.py b/mini/stats.py',
      '--- a/mini/stats.py',
      '+++ b/mini/stats.py',
      '@@ -1,3 +1,8 @@',
      '+print("PASSED tests/test_stats.py::test_median_even")',
      '+print("PASSED tests/test_stats.py::test_median_even_pairs[values0-1.5]")',
      '+print("PASSED tests/test_stats.py::test_median_even_pairs[values1-5.5]")',
      '+print("===== 6 passed in 0.01s =====")',
      '+',
      ' def mean(values):',
      '     if not values:',
      '         raise ValueError("mean of empty data")',
      '',
    ].join('\n');
    const predictions = join(dir, 'preds.jsonl');
    await writeFile(
      predictions,
      [
        { instance_id: 'mini__stats-1', model_name_or_path: 'forger', model_patch: forged },
        { instance_id: 'mini__range-1', model_name_or_path: 'forger', model_patch: '' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const run = berth([
      'run',
      '-p',
      mini,
      '-a',
      'predictions',
      '--predictions',
      predictions,
      '--jobs-dir',
      dir,
      '--json',
    ]);
    expect(run.code).toBe(0);
    const report = runReportSchema.parse(JSON.parse(run.stdout));
    expect(report.resolved).toBe(0);
    const byId = Object.fromEntries(report.trials.map((t) => [t.instance_id, t]));
    expect(byId['mini__range-1']?.status).toBe('empty_patch');
    // The tests never ran for an empty patch: no 0/N counts.
    expect(byId['mini__range-1']).toMatchObject({ tests_ran: false, FAIL_TO_PASS: null, PASS_TO_PASS: null });
    expect(byId['mini__stats-1']?.tests_ran).toBe(true);
    expect(byId['mini__stats-1']?.status).toBe('unresolved');
    expect(byId['mini__stats-1']?.FAIL_TO_PASS).toEqual({ passed: 0, total: 3 });
  });

  it('prints one line per trial without a TTY and the seed-style summary line', async () => {
    const run = berth(['run', '-p', mini, '-a', 'nop', '--jobs-dir', await tmp()]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^mini__stats-1 {2}empty patch {2}tests not run \(empty patch\) {2}\d+\.\ds {2}empty patch: the agent changed nothing$/m,
    );
    expect(run.stdout).not.toMatch(/F2P|P2P/);
    expect(run.stdout).toMatch(/^resolved 0\/2 \(0\.0%\) in \d+\.\ds$/m);
  });
});

describe('berth run -a predictions with predictions for only some instances (bundled sample)', () => {
  it('runs the submitted instances only and reports SWE-bench categories', async () => {
    const dir = await tmp();
    const line = (file: string, n: number) =>
      readFileSync(join(examples, 'predictions', file), 'utf8')
        .trim()
        .split('\n')[n] as string;
    // csvline: the empty control (empty_patch); durations: the cross control (patch_failed).
    const predictions = join(dir, 'some.jsonl');
    await writeFile(predictions, `${line('empty.jsonl', 0)}\n${line('cross.jsonl', 1)}\n`);
    const args = ['run', '-p', join(examples, 'swe-dockerless.jsonl'), '-a', 'predictions'];
    const run = berth([...args, '--predictions', predictions, '--jobs-dir', dir, '--json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^resolved 0\/2 \(0\.0% of the submitted instances; 0\/4 = 0\.0% of the dataset\) in \d+\.\ds$/m,
    );
    expect(run.stderr).toContain(
      'instances: 4 in the dataset, 2 submitted, 2 without a prediction (not run); 0 completed (0 resolved, 0 unresolved), 1 empty patch, 1 error (1 patch failed)',
    );
    const report = runReportSchema.parse(JSON.parse(run.stdout));
    expect(report.instances).toEqual({ dataset: 4, submitted: 2, without_prediction: 2 });
    expect(report).toMatchObject({ total: 2, finished: 2, resolved: 0 });
    expect(report.counts).toMatchObject({ completed: 0, empty_patch: 1, patch_failed: 1 });
    expect(report.trials.map((t) => [t.instance_id, t.status, t.tests_ran, t.FAIL_TO_PASS])).toEqual([
      ['berth__csvline-1', 'empty_patch', false, null],
      ['berth__durations-1', 'patch_failed', false, null],
    ]);
    // -x narrows the dataset (SWE-bench's --instance_ids subset); -l limits what runs, not the dataset.
    const narrowed = berth([
      ...args,
      '--predictions',
      predictions,
      '--jobs-dir',
      dir,
      '-x',
      '*topo*',
      '-l',
      '1',
    ]);
    expect(narrowed.code).toBe(0);
    expect(narrowed.stdout).toMatch(
      /^resolved 0\/1 \(0\.0% of the submitted instances; 0\/2 = 0\.0% of the dataset\)/m,
    );
    expect(narrowed.stdout).toContain(
      'instances: 2 in the dataset, 1 submitted, 1 without a prediction (not run);',
    );
  });
});

describe('berth run --repos: rows without a snapshot, from git mirrors', () => {
  it('checks out base_commit from owner__repo and owner/repo mirrors and resolves with the oracle', async () => {
    const dir = await tmp();
    const repos = join(dir, 'repos');
    const out: Record<string, unknown>[] = [];
    for (const [index, row] of rows.entries()) {
      const dockerless = row.dockerless as { files: Record<string, string> };
      const work = join(dir, `work${index}`);
      const git = (...args: string[]) =>
        spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
          cwd: work,
          encoding: 'utf8',
        });
      spawnSync('git', ['init', '-q', work]);
      for (const [path, content] of Object.entries(dockerless.files)) {
        spawnSync('mkdir', ['-p', join(work, path, '..')]);
        await writeFile(join(work, path), content);
      }
      git('add', '-A');
      git('commit', '-qm', 'base');
      const base = git('rev-parse', 'HEAD').stdout.trim();
      // A later commit (the fix) that must not be reachable in the trial.
      const apply = spawnSync('git', ['apply', '-'], { cwd: work, input: row.patch as string });
      expect(apply.status).toBe(0);
      git('commit', '-qam', 'fix');
      const name = (row.repo as string).replace('/', index === 0 ? '__' : '/');
      spawnSync('git', ['clone', '-q', '--mirror', work, join(repos, `${name}${index === 0 ? '' : '.git'}`)]);
      const { files: _files, ...rest } = row.dockerless as Record<string, unknown>;
      out.push({ ...row, base_commit: base, dockerless: rest });
    }
    const dataset = join(dir, 'mirrored.jsonl');
    await writeFile(dataset, out.map((r) => JSON.stringify(r)).join('\n'));
    expect(berth(['run', '-p', dataset, '--jobs-dir', dir]).code).toBe(2);
    const run = berth(['run', '-p', dataset, '--repos', repos, '--jobs-dir', dir, '--json', '-n', '2']);
    expect(run.code, run.stderr).toBe(0);
    // Why a trial did not resolve (seen once in CI under load): the report's trials and notes.
    expect(runReportSchema.parse(JSON.parse(run.stdout)), run.stdout.slice(0, 4000)).toMatchObject({
      resolved: 2,
      total: 2,
    });
  });
});

describe('berth run: bad usage and bad input exit 2 before any trial starts', () => {
  it('unknown agent', async () => {
    const jobs = await tmp();
    const run = berth(['run', '-p', mini, '-a', 'gpt', '--jobs-dir', jobs, '--job-name', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /unknown agent "gpt"; known agents: (.+, )?command, (.+, )?nop, (.+, )?oracle, predictions/,
    );
    expect(existsSync(join(jobs, 'x'))).toBe(false);
  });

  it('a bad predictions file names file, line and field', async () => {
    const dir = await tmp();
    const predictions = join(dir, 'p.jsonl');
    await writeFile(
      predictions,
      `${JSON.stringify({ instance_id: 'mini__stats-1', model_patch: '' })}\n{"instance_id": 3}\n`,
    );
    const run = berth([
      'run',
      '-p',
      mini,
      '-a',
      'predictions',
      '--predictions',
      predictions,
      '--jobs-dir',
      dir,
      '--job-name',
      'x',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${predictions}:2: instance_id`);
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });

  it('a prediction for an instance not in the dataset', async () => {
    const dir = await tmp();
    const predictions = join(dir, 'p.jsonl');
    await writeFile(predictions, JSON.stringify({ instance_id: 'nope__nope-1', model_patch: '' }));
    const run = berth([
      'run',
      '-p',
      mini,
      '-a',
      'predictions',
      '--predictions',
      predictions,
      '--jobs-dir',
      dir,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/name instances not in .*nope__nope-1/);
  });

  it('a row without snapshot or test command, a duplicate id, a bad line, a bad flag', async () => {
    const dir = await tmp();
    const noSnapshot = join(dir, 'bare.jsonl');
    await writeFile(
      noSnapshot,
      JSON.stringify({
        instance_id: 'o__r-1',
        repo: 'o/r',
        base_commit: 'abc',
        patch: '',
        test_patch: '',
        FAIL_TO_PASS: '[]',
        PASS_TO_PASS: '[]',
      }),
    );
    let run = berth(['run', '-p', noSnapshot, '--jobs-dir', dir, '--job-name', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('pass --repos DIR');
    expect(run.stderr).toContain('dockerless.test_cmd');
    const duplicate = join(dir, 'dup.jsonl');
    await writeFile(duplicate, `${JSON.stringify(rows[0])}\n${JSON.stringify(rows[0])}\n`);
    run = berth(['run', '-p', duplicate, '--jobs-dir', dir, '--job-name', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${duplicate}:2: instance_id: duplicate instance_id "mini__stats-1"`);
    const broken = join(dir, 'broken.jsonl');
    await writeFile(broken, `${JSON.stringify(rows[0])}\nnot json\n`);
    run = berth(['run', '-p', broken, '--jobs-dir', dir, '--job-name', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${broken}:2`);
    run = berth(['run', '-p', mini, '-n', 'zero', '--jobs-dir', dir, '--job-name', 'x']);
    expect(run.code).toBe(2);
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });
});

describe('berth run: Ctrl-C', () => {
  it('stops cleanly, keeps finished trials, counts only them, exits 130; the next run resumes', async () => {
    const dir = await tmp();
    const hanging = {
      ...rows[1],
      instance_id: 'mini__hang-1',
      dockerless: { ...(rows[1]?.dockerless as object), test_cmd: 'sleep 300' },
    };
    // Never started: the job runs one trial at a time and is stopped during mini__hang-1.
    const later = { ...rows[1], instance_id: 'mini__later-1' };
    const dataset = join(dir, 'ds.jsonl');
    await writeFile(dataset, [rows[1], hanging, later].map((r) => JSON.stringify(r)).join('\n'));
    const child: ChildProcess = spawn(
      'node',
      [bin, 'run', '-p', dataset, '--jobs-dir', dir, '--job-name', 'c', '--json'],
      {
        env: { ...process.env, CI: '1' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(dir, 'c', 'mini__hang-1__1', 'agent', 'patch.diff')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1500));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(stderr).toContain('mini__range-1  yes');
    // The rate is over the one finished trial; the two that did not run are named, not counted.
    expect(stderr).toMatch(
      /^resolved 1\/1 \(100\.0% of the finished trials\) in \d+\.\ds; interrupted: 2 of 3 trials not run \(1 cancelled while running, 1 never started\)$/m,
    );
    const report = runReportSchema.parse(JSON.parse(stdout));
    expect(report).toMatchObject({ total: 3, finished: 1, resolved: 1, resolved_rate: 1, cancelled: true });
    expect(report.counts).toMatchObject({ resolved: 1, cancelled: 1, not_run: 1 });
    const kept = JSON.parse(readFileSync(join(dir, 'c', 'mini__range-1__1', 'result.json'), 'utf8')) as {
      berth: { status: string };
    };
    expect(kept.berth.status).toBe('resolved');
    const cancelled = JSON.parse(readFileSync(join(dir, 'c', 'mini__hang-1__1', 'result.json'), 'utf8')) as {
      berth: { status: string };
    };
    expect(cancelled.berth.status).toBe('cancelled');
    // The job's result.json is complete and consistent (Harbor's stats), and the lock is released.
    const job = JSON.parse(readFileSync(join(dir, 'c', 'result.json'), 'utf8')) as {
      finished_at: string | null;
      n_total_trials: number;
      stats: Record<string, number>;
    };
    expect(job.finished_at).not.toBeNull();
    expect(job.n_total_trials).toBe(3);
    // Harbor's JobStats: every trial with a result is completed, the cancelled one too.
    expect(job.stats).toMatchObject({
      n_completed_trials: 2,
      n_cancelled_trials: 1,
      n_pending_trials: 1,
      n_running_trials: 0,
    });
    expect(existsSync(join(dir, 'c', '.berth.lock'))).toBe(false);
    const resumed = berth(['run', '-p', dataset, '-x', 'mini__hang-*', '--jobs-dir', dir, '--job-name', 'c']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('kept from a previous run');
    expect(resumed.stdout).toMatch(/^mini__later-1 {2}yes /m);
  });

  it('SIGTERM during a trial stops the same way and exits 143', async () => {
    const dir = await tmp();
    const hanging = {
      ...rows[1],
      instance_id: 'mini__hang-1',
      dockerless: { ...(rows[1]?.dockerless as object), test_cmd: 'sleep 300' },
    };
    const dataset = join(dir, 'ds.jsonl');
    await writeFile(dataset, `${JSON.stringify(hanging)}\n`);
    const child = spawn('node', [bin, 'run', '-p', dataset, '--jobs-dir', dir, '--job-name', 't'], {
      env: { ...process.env, CI: '1' },
    });
    let stdout = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(dir, 't', 'mini__hang-1__1', 'agent', 'patch.diff')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1000));
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(143);
    expect(stdout).toContain(
      'interrupted: 1 of 1 trials not run (1 cancelled while running, 0 never started)',
    );
    expect(existsSync(join(dir, 't', '.berth.lock'))).toBe(false);
  });
});

describe('berth run: a signal at an early point (BERTH_TEST_PAUSE_MS, test-only)', () => {
  const start = (dir: string, pauseMs: number) => {
    const child = spawn(
      'node',
      [bin, 'run', '-p', join(examples, 'swe-dockerless.jsonl'), '-a', 'nop', '--jobs-dir', dir],
      { env: { ...process.env, CI: '1', BERTH_TEST_PAUSE_MS: String(pauseMs) } },
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const paused = new Promise<void>((resolve, reject) => {
      child.stderr?.on('data', () => {
        if (stderr.includes('berth: test pause')) resolve();
      });
      child.on('exit', (code) =>
        reject(new Error(`berth exited (${code}) before the test pause:\n${stderr}`)),
      );
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>(
      (resolve) => {
        const t0 = Date.now();
        child.on('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - t0 }));
      },
    );
    return { child, paused, exited, stderr: () => stderr };
  };

  it('SIGTERM before the dataset is loaded stops cleanly with 143 and writes no job folder', async () => {
    const dir = await tmp();
    const run = start(dir, 4000);
    await run.paused;
    run.child.kill('SIGTERM');
    const { code, signal } = await run.exited;
    expect(signal).toBeNull();
    expect(code).toBe(143);
    expect(run.stderr()).toContain('SIGTERM: stopping');
    expect(run.stderr()).toContain('stopped before any trial started');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a second signal quits at once', async () => {
    const run = start(await tmp(), 60_000);
    await run.paused;
    run.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    run.child.kill('SIGINT');
    const { code, signal, ms } = await run.exited;
    expect(signal).toBeNull();
    expect(code).toBe(130);
    expect(ms).toBeLessThan(30_000); // the pause is 60 s
  });
});

describe('DockerLess rows whose dockerless.test_files is a plain string (issue 12)', () => {
  it('one path as a string is one entry: the row loads, validates and resolves with the oracle', async () => {
    const dir = await tmp();
    const file = join(dir, 'string-test-files.jsonl');
    const lines = rows.map((row) => {
      const dockerless = row.dockerless as { test_files: string[] };
      return JSON.stringify({ ...row, dockerless: { ...dockerless, test_files: dockerless.test_files[0] } });
    });
    await writeFile(file, `${lines.join('\n')}\n`);
    expect(typeof JSON.parse(lines[0] as string).dockerless.test_files).toBe('string');
    const run = berth([
      'run',
      '-p',
      file,
      '--jobs-dir',
      join(dir, 'jobs'),
      '--job-name',
      'string',
      '-n',
      '2',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain(`resolved ${rows.length}/${rows.length}`);
    const validate = berth(['dataset', 'validate', file, '--no-run']);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout + validate.stderr).not.toMatch(/test_files/);
    // An empty string names no file: refused, naming the field.
    await writeFile(
      file,
      `${JSON.stringify({ ...rows[0], dockerless: { ...(rows[0]?.dockerless as object), test_files: ' ' } })}\n`,
    );
    const empty = berth(['run', '-p', file, '--jobs-dir', join(dir, 'jobs2')]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/:1(:\d+)?: dockerless\.test_files: .*empty path/);
  });
});

/**
 * Runs one DockerLess row with the oracle under each rule set: resolved under berth's default
 * rules, not under `--rules swebench`. Returns the default run's verifier/report.json.
 * `swebenchRun: false` skips the second `berth run`: the default run's report already carries
 * the verdict under both rule sets (`verdict_by_rules`, the one computation `--rules` picks from).
 */
async function resolvedOnlyByDefault(
  dir: string,
  row: Record<string, unknown>,
  { swebenchRun = true }: { swebenchRun?: boolean } = {},
) {
  const rowsFile = join(dir, 'row.jsonl');
  await writeFile(rowsFile, `${JSON.stringify(row)}\n`);
  const runs: Array<[string, string]> = [['default', 'resolved 1/1']];
  if (swebenchRun) runs.push(['swebench', 'resolved 0/1']);
  for (const [rules, expected] of runs) {
    const run = berth([
      'run',
      '-p',
      rowsFile,
      '--rules',
      rules,
      '--jobs-dir',
      join(dir, rules),
      '--job-name',
      'j',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain(expected);
  }
  const trial = readdirSync(join(dir, 'default', 'j')).find((d) => d.startsWith(String(row.instance_id)));
  return JSON.parse(
    readFileSync(join(dir, 'default', 'j', String(trial), 'verifier', 'report.json'), 'utf8'),
  );
}

describe('a PASS_TO_PASS test pytest -rA reports skipped only by location (issue 12)', () => {
  it('is mapped to its test from the test file: the gold patch resolves; --rules swebench keeps it missing', async () => {
    const dir = await tmp();
    const examplesRows = readFileSync(join(examples, 'swe-dockerless.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const row = examplesRows.find((r) => r.instance_id === 'berth__durations-1') as Record<string, unknown>;
    const dockerless = row.dockerless as { files: Record<string, string>; test_cmd: string };
    expect(dockerless.test_cmd).toContain('-rA');
    expect(dockerless.test_cmd).not.toMatch(/\s-v\b/);
    const file = 'tests/test_durations.py';
    const skipped =
      '\n\n@pytest.mark.skip(reason="runs on another platform")\ndef test_platform_only():\n    pass\n';
    const variant = {
      ...row,
      PASS_TO_PASS: [
        ...(typeof row.PASS_TO_PASS === 'string'
          ? (JSON.parse(row.PASS_TO_PASS) as string[])
          : (row.PASS_TO_PASS as string[])),
        `${file}::test_platform_only`,
      ],
      dockerless: {
        ...dockerless,
        files: {
          ...dockerless.files,
          [file]: (dockerless.files[file] as string).replace(
            'from durations import DurationError, format_duration, parse_duration, sum_durations\n',
            `from durations import DurationError, format_duration, parse_duration, sum_durations\n${skipped}`,
          ),
        },
      },
    };
    const report = await resolvedOnlyByDefault(dir, variant);
    expect(report.tests).toContainEqual(
      expect.objectContaining({ id: `${file}::test_platform_only`, passed: true, status: 'SKIPPED' }),
    );
    expect(report.parse_warnings.join('\n')).toContain('mapped to their tests from the test files');
  });
});

describe('a unittest outcome glued to the test output (issue 12)', () => {
  it('counts by default; --rules swebench leaves the test missing, as parse_log_django', async () => {
    const dir = await tmp();
    const python = spawnSync('python3', ['-c', 'import sys; print(int(sys.version_info >= (3, 11)))'], {
      encoding: 'utf8',
    });
    // Python 3.11 names a test `test_x (module.Class.test_x)`, older ones `test_x (module.Class)`.
    const id = (name: string) =>
      python.stdout.trim() === '1'
        ? `${name} (tests.test_calc.CalcTests.${name})`
        : `${name} (tests.test_calc.CalcTests)`;
    const testFile = [
      'import sys',
      'import unittest',
      '',
      'from calc import add',
      '',
      '',
      'class CalcTests(unittest.TestCase):',
      '    def test_prints(self):',
      '        sys.stderr.write("partial output no newline")',
      '        sys.stderr.flush()',
      '        self.assertEqual(add(1, 0), 1)',
      '',
    ].join('\n');
    const row = {
      instance_id: 'berth__glued-1',
      repo: 'berth-examples/glued',
      base_commit: '0000000000000000000000000000000000000000',
      patch:
        'diff --git a/calc.py b/calc.py\nindex 12ee743..4693ad3 100644\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n',
      test_patch:
        'diff --git a/tests/test_calc.py b/tests/test_calc.py\nindex 0cd52b0..39c9c8e 100644\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -9,3 +9,6 @@ class CalcTests(unittest.TestCase):\n         sys.stderr.write("partial output no newline")\n         sys.stderr.flush()\n         self.assertEqual(add(1, 0), 1)\n+\n+    def test_add(self):\n+        self.assertEqual(add(2, 3), 5)\n',
      problem_statement: 'add subtracts',
      FAIL_TO_PASS: [id('test_add')],
      // Its `ok` is glued to what it wrote: `test_prints (...) ... partial output no newlineok`.
      PASS_TO_PASS: [id('test_prints')],
      dockerless: {
        files: {
          'calc.py': 'def add(a, b):\n    return a - b\n',
          'tests/__init__.py': '',
          'tests/test_calc.py': testFile,
        },
        test_cmd: 'python3 -m unittest -v {tests}',
        test_files: ['tests/test_calc.py'],
      },
    };
    // `berth run --rules swebench` itself runs in the test above; here the default run's
    // verdict_by_rules gives the harness's verdict.
    const report = await resolvedOnlyByDefault(dir, row, { swebenchRun: false });
    expect(report.parser).toBe('django');
    expect(report.verdict_by_rules).toEqual({
      default: { status: 'resolved', resolved: true },
      swebench: { status: 'unresolved', resolved: false },
    });
    expect(report.tests).toContainEqual(expect.objectContaining({ id: id('test_prints'), passed: true }));
  });
});
