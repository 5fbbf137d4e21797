import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.ts';
import { runReportSchema } from '../../src/reporters/json.ts';
import {
  combineReporters,
  createReporters,
  ownsStdout,
  reporterNames,
} from '../../src/reporters/registry.ts';
import type { ReporterContext } from '../../src/reporters/reporter.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const mini = join(fixturesDir, 'swebench', 'mini.jsonl');

function context(out: string[], err: string[]): ReporterContext {
  return {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    stdoutIsTTY: false,
    stderrIsTTY: false,
    ci: true,
    dataset: 'd',
    agent: 'oracle',
    total: 0,
    scope: { datasetInstances: 0, submittedInstances: 0, attempts: 1, predictions: false },
  };
}

describe('reporter registry', () => {
  it('knows default, ci and json, and refuses an unknown name listing the known ones', () => {
    expect(reporterNames()).toEqual(expect.arrayContaining(['ci', 'default', 'json']));
    expect(() => createReporters(['fancy'], context([], []))).toThrow(UsageError);
    expect(() => createReporters(['fancy'], context([], []))).toThrow(/known reporters: ci, default, json/);
    expect(ownsStdout(['default', 'json'])).toBe(true);
    expect(ownsStdout(['default', 'ci'])).toBe(false);
  });

  it('sends human text to stderr when json owns stdout', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const reporter = combineReporters(createReporters(['ci', 'json'], context(out, err)));
    const summary = {
      job_name: 'j',
      job_dir: '/tmp/j',
      started_at: '',
      finished_at: '',
      duration_sec: 1,
      total: 0,
      resolved: 0,
      cancelled: false,
      trials: [],
      reused: 0,
    };
    await reporter.onJobEnd(
      { summary, swebench: null },
      {
        type: 'job-end',
        v: 1,
        time: '',
        job: 'j',
        duration_sec: 1,
        n_trials: 0,
        n_finished: 0,
        n_resolved: 0,
        n_errors: 0,
        cancelled: false,
      },
    );
    expect(runReportSchema.parse(JSON.parse(out.join(''))).job_name).toBe('j');
    expect(err.join('')).toContain('resolved 0/0');
  });

  it('berth run --reporter ci writes a line per trial on stdout; --reporter json and ci keep stdout one JSON document', async () => {
    const jobs = await temp.make('berth-engine-reporter-');
    const run = (args: string[]) =>
      spawnSync('node', [bin, 'run', '-p', mini, '--jobs-dir', jobs, ...args], {
        encoding: 'utf8',
        env: { ...process.env, CI: '' },
      });
    const ci = run(['--job-name', 'a', '--reporter', 'ci']);
    expect(ci.status).toBe(0);
    expect(ci.stdout).toMatch(/^mini__stats-1 {2}yes {2}F2P \d+\/\d+/m);
    expect(ci.stdout).toContain('resolved 2/2 (100.0%)');
    const both = run(['--job-name', 'b', '--reporter', 'json', '--reporter', 'ci']);
    expect(both.status).toBe(0);
    expect(runReportSchema.parse(JSON.parse(both.stdout)).resolved).toBe(2);
    expect(both.stderr).toMatch(/^mini__stats-1 {2}yes/m);
    const bad = run(['--job-name', 'c', '--reporter', 'nope']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown reporter "nope"');
  });
});
