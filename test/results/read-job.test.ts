import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderJobReport } from '../../src/reporters/html/report.ts';
import { readJob } from '../../src/results/read-job.ts';
import { summarize } from '../../src/results/summary.ts';
import { REPORT_LIMITS, readTrialDetails, VIEWER_LIMITS } from '../../src/results/trial-details.ts';
import { notHarborJobFolder } from '../helpers/harbor-job-check.ts';
import { addTrajectory, runMultilingualControls, runPartial, runSample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

let jobs = '';
let oracle = '';
let partial = '';
let nop = '';
let controls = '';

beforeAll(async () => {
  jobs = await temp.make('berth-report-jobs-');
  oracle = runSample(jobs, 'oracle', ['-a', 'oracle', '-n', '2']);
  partial = runPartial(jobs, 'partial');
  nop = runSample(jobs, 'nop', ['-a', 'nop']);
  controls = runMultilingualControls(jobs, 'controls');
}, 300_000);

describe('reading job folders berth wrote', () => {
  it('a berth run job: outcomes, categories from the task, Wilson interval, phases', async () => {
    const job = await readJob(oracle);
    expect(job).toMatchObject({
      name: 'oracle',
      writer: 'berth',
      dataset: 'swe-dockerless',
      agent: 'oracle',
      running: false,
    });
    expect(job.trials.map((t) => [t.task, t.outcome, t.repository, t.language])).toEqual([
      ['berth__csvline-1', 'resolved', 'berth-examples/csvline', 'javascript'],
      ['berth__durations-1', 'resolved', 'berth-examples/durations', 'python'],
      ['berth__intervals-1', 'resolved', 'berth-examples/intervals', 'python'],
      ['berth__toposort-1', 'resolved', 'berth-examples/toposort', 'javascript'],
    ]);
    const summary = summarize(job.trials);
    // Wilson 95% for 4/4: [0.5101, 1].
    expect(summary.rate).toMatchObject({ n: 4, resolved: 4, rate: 1 });
    expect(summary.rate.interval?.low).toBeCloseTo(0.5101, 4);
    expect(summary.by.language.map((g) => [g.value, g.resolved, g.n])).toEqual([
      ['javascript', 2, 2],
      ['python', 2, 2],
    ]);
    expect(job.trials.every((t) => t.phases.verifier !== null && t.phases.environment !== null)).toBe(true);
  });

  it('a failed trial says which tests failed, by name; an empty patch says so', async () => {
    const job = await readJob(partial);
    const csv = job.trials.find((t) => t.task === 'berth__csvline-1');
    expect(csv?.outcome).toBe('failed');
    const failing = JSON.parse(readFileSync(join(partial, csv?.name as string, 'result.json'), 'utf8'))
      .berth.verifier_details.tests.filter((t: { passed: boolean }) => !t.passed)
      .map((t: { id: string }) => t.id);
    expect(failing.length).toBeGreaterThan(0);
    expect(csv?.why).toBe(
      `failing: ${failing.slice(0, 3).join(', ')}${failing.length > 3 ? ` (+${failing.length - 3} more)` : ''}`,
    );
    const empty = await readJob(nop);
    expect(empty.trials.map((t) => [t.outcome, t.why])).toEqual(
      Array(4).fill(['failed', 'empty patch: the agent changed nothing']),
    );
  });

  it('a multilingual job: task types and languages, and each test with its reason', async () => {
    const job = await readJob(controls);
    const summary = summarize(job.trials);
    expect(summary.by.task_type.map((g) => [g.value, g.resolved, g.n])).toEqual([
      ['BF', 1, 3],
      ['FE', 1, 1],
      ['FI', 0, 1],
      ['RF', 0, 1],
    ]);
    expect(summary.by.language.map((g) => g.value)).toEqual(['go', 'javascript', 'python']);
    const semver = job.trials.find((t) => t.task.includes('semver-lite'));
    expect(semver?.why).toBe('failing: numeric pre-release identifiers compare as numbers');
    const details = await readTrialDetails(controls, semver?.name as string, REPORT_LIMITS);
    expect(details?.tests.find((t) => !t.passed)).toMatchObject({
      category: 'FAIL_TO_PASS',
      status: 'FAILED',
      reason: 'failed',
    });
    expect(details?.patch?.head).toContain('diff --git a/src/compare.js');
  });

  it('the instruction the trial was given is on its page; a trajectory is read and cut', async () => {
    const job = await readJob(partial);
    const name = job.trials[0]?.name as string;
    addTrajectory(join(partial, name));
    const details = await readTrialDetails(partial, name, { ...VIEWER_LIMITS, trajectoryText: 40 });
    expect(details?.instruction).toContain('RFC 4180');
    expect(details?.instruction_source).toBe('instruction.md');
    expect((details?.trajectory as { steps: unknown[] } | undefined)?.steps).toHaveLength(5);
    expect(details?.trajectory_note).toMatch(
      /long or deeply nested value\(s\) cut \(texts to 40 characters\)/,
    );
  });
});

describe('a hostile trial folder', () => {
  it('links are not followed, special files not opened, big logs cut, markup stays data', async () => {
    const secret = join(jobs, 'secret.txt');
    writeFileSync(secret, 'BERTH-SECRET-MARKER');
    const job = await readJob(nop);
    const name = job.trials[1]?.name as string;
    const trial = join(nop, name);
    mkdirSync(join(trial, 'agent'), { recursive: true });
    mkdirSync(join(trial, 'verifier'), { recursive: true });
    symlinkSync(secret, join(trial, 'agent', 'trajectory.json'));
    symlinkSync(secret, join(trial, 'verifier', 'test-stdout.txt'));
    symlinkSync(jobs, join(trial, 'agent', 'linked-folder'));
    symlinkSync(secret, join(trial, 'instruction.md.lnk'));
    rmSync(join(trial, 'instruction.md'));
    symlinkSync(secret, join(trial, 'instruction.md'));
    expect(spawnSync('mkfifo', [join(trial, 'verifier', 'pipe.log')]).status).toBe(0);
    writeFileSync(join(trial, 'agent', 'big.log'), `${'x'.repeat(3_000_000)}\nEND-OF-BIG-LOG\n`);
    writeFileSync(
      join(trial, 'agent', 'evil.log'),
      '</script><script>window.__berthInjected = true</script><!-- ',
    );
    // A trajectory nested 200,000 deep would overflow any recursive walk or JSON.stringify.
    const other = join(nop, job.trials[2]?.name as string);
    mkdirSync(join(other, 'agent'), { recursive: true });
    writeFileSync(
      join(other, 'agent', 'trajectory.json'),
      `{"steps": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
    );
    const deep = await readTrialDetails(nop, job.trials[2]?.name as string, REPORT_LIMITS);
    expect(deep?.trajectory_note).toMatch(/deeply nested/);
    const details = await readTrialDetails(nop, name, REPORT_LIMITS);
    expect(details?.trajectory).toBeNull();
    expect(JSON.stringify(details)).not.toContain('BERTH-SECRET-MARKER');
    expect(details?.logs.map((l) => l.path)).not.toContain('verifier/pipe.log');
    const big = details?.logs.find((l) => l.path === 'agent/big.log');
    expect(big?.omitted).toBe(3_000_016 - REPORT_LIMITS.logHead - REPORT_LIMITS.logTail);
    expect(big?.tail).toContain('END-OF-BIG-LOG');
    const html = await renderJobReport(nop);
    expect(html).not.toContain('BERTH-SECRET-MARKER');
    expect(html).not.toContain('</script><script>window.__berthInjected');
    expect(html).toContain('\\u003c/script>\\u003cscript>window.__berthInjected');
    // Path games: a trial name that leaves the job folder is refused.
    expect(await readTrialDetails(nop, '..', REPORT_LIMITS)).toBeUndefined();
    expect(await readTrialDetails(nop, '../nop', REPORT_LIMITS)).toBeUndefined();
  });

  it('a damaged result.json is a warning on the page, and the other trials are still read', async () => {
    const dir = await temp.make('berth-report-damaged-');
    const copy = runSample(dir, 'copy', ['-a', 'nop', '-l', '2']);
    const job = await readJob(copy);
    notHarborJobFolder(copy, 'a trial result.json is cut on purpose');
    writeFileSync(join(copy, job.trials[0]?.name as string, 'result.json'), '{"verifier_result":');
    const again = await readJob(copy);
    expect(again.warnings).toEqual([`${job.trials[0]?.name}/result.json could not be read as a JSON object`]);
    expect(again.trials.map((t) => t.outcome)).toEqual(['cancelled', 'failed']);
  });
});
