/**
 * Real job folders for the report, viewer and comparison tests: `berth run` on the bundled sample
 * (oracle, nop, the partial-fix predictions) and `berth multilingual run` on the multilingual
 * examples (the control predictions), made once per test file by the real CLI.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixturesDir } from './data.ts';

export const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
export const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
export const sample = join(examples, 'swe-dockerless.jsonl');

/** Runs the berth CLI to its end (CI=1: one line per trial). */
export function berth(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the berth CLI without waiting (a live job, a viewer). */
export function berthAsync(args: string[], env: Record<string, string> = {}) {
  return spawn('node', [bin, ...args], {
    env: { ...process.env, CI: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `berth run` on the bundled sample; throws with its output when it does not exit 0. */
export function runSample(jobsDir: string, jobName: string, args: string[]): string {
  const run = berth(['run', '-p', sample, '--jobs-dir', jobsDir, '--job-name', jobName, ...args]);
  if (run.code !== 0)
    throw new Error(`berth run ${jobName} exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
  return join(jobsDir, jobName);
}

/** `berth run` of the bundled sample's partial-fix predictions (every instance fails some tests). */
export function runPartial(jobsDir: string, jobName: string): string {
  return runSample(jobsDir, jobName, [
    '-a',
    'predictions',
    '--predictions',
    join(examples, 'predictions', 'partial.jsonl'),
    '-n',
    '2',
  ]);
}

/** `berth multilingual run` (local) of the control predictions. */
export function runMultilingualControls(jobsDir: string, jobName: string): string {
  const dataset = join(examples, 'multilingual');
  const run = berth([
    'multilingual',
    'run',
    '-p',
    dataset,
    '-a',
    'predictions',
    '--predictions',
    join(dataset, 'predictions', 'controls.jsonl'),
    '--jobs-dir',
    jobsDir,
    '--job-name',
    jobName,
  ]);
  if (run.code !== 0)
    throw new Error(`berth multilingual run exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
  return join(jobsDir, jobName);
}

/** The hand-written ATIF trajectory (test/fixtures/report/trajectory.json, valid against Harbor's schema). */
export const trajectoryFixture = join(fixturesDir, 'report', 'trajectory.json');

/** Puts the fixture trajectory into a trial's agent folder, as an agent that calls models leaves it. */
export function addTrajectory(trialDir: string): void {
  mkdirSync(join(trialDir, 'agent'), { recursive: true });
  copyFileSync(trajectoryFixture, join(trialDir, 'agent', 'trajectory.json'));
}

/**
 * Writes a copy of the bundled sample to `file` in which the row `instanceId` has `install` as its
 * DockerLess install step (e.g. a command that fails: an environment error, not the agent's).
 */
export function writeSampleWithInstall(file: string, instanceId: string, install: string): string {
  const rows = readFileSync(sample, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { instance_id: string; dockerless: Record<string, unknown> });
  if (!rows.some((row) => row.instance_id === instanceId))
    throw new Error(`no row ${instanceId} in the sample`);
  const changed = rows.map((row) =>
    row.instance_id === instanceId ? { ...row, dockerless: { ...row.dockerless, install } } : row,
  );
  writeFileSync(file, `${changed.map((row) => JSON.stringify(row)).join('\n')}\n`);
  return file;
}
