/**
 * `jobs/<job>/events.jsonl` of a real `berth run` (local environment): written as the job runs,
 * read back with the schema; a run killed with SIGKILL leaves a readable log up to its last event.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BerthEvent, parseEventLine } from '../../src/trials/events.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const root = resolve(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'berth.js');
const sample = join(root, 'examples', 'swe-dockerless.jsonl');

function read(file: string): { events: BerthEvent[]; lines: string[] } {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  return { lines, events: lines.map(parseEventLine).filter((e): e is BerthEvent => e !== undefined) };
}

describe('events.jsonl of a berth run job', () => {
  it('holds the job, every trial, its phases in order and its verdict', async () => {
    const jobs = await temp.make('berth-engine-events-');
    const run = spawnSync(
      process.execPath,
      [bin, 'run', '-p', sample, '-l', '2', '--jobs-dir', jobs, '--job-name', 'j'],
      {
        encoding: 'utf8',
        env: { ...process.env, CI: '1' },
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const { events, lines } = read(join(jobs, 'j', 'events.jsonl'));
    expect(events).toHaveLength(lines.length);
    expect(events[0]).toMatchObject({ type: 'job-start', job: 'j', n_trials: 2 });
    expect(events.at(-1)).toMatchObject({ type: 'job-end', n_trials: 2, n_resolved: 2, cancelled: false });
    for (const trial of events.filter((e) => e.type === 'trial-start').map((e) => e.trial)) {
      const own = events.filter((e) => 'trial' in e && e.trial === trial);
      const phases = own
        .filter((e) => e.type === 'phase-start')
        .map((e) => (e.type === 'phase-start' ? e.phase : ''));
      expect(phases).toEqual(['environment', 'agent', 'patch', 'verifier']);
      expect(own.at(0)?.type).toBe('trial-start');
      expect(own.at(-1)).toMatchObject({ type: 'trial-end', status: 'resolved', rewards: { reward: 1 } });
      expect(own.some((e) => e.type === 'verdict' && e.FAIL_TO_PASS !== null)).toBe(true);
      expect(own.some((e) => e.type === 'command' && e.phase === 'verifier')).toBe(true);
      // The trial's own log holds the same events.
      expect(read(join(jobs, 'j', trial, 'events.jsonl')).events).toEqual(own);
    }
  }, 300_000);

  it('a run killed with SIGKILL leaves every event it emitted readable', async () => {
    const jobs = await temp.make('berth-engine-events-');
    const child = spawn(process.execPath, [bin, 'run', '-p', sample, '--jobs-dir', jobs, '--job-name', 'k'], {
      env: { ...process.env, CI: '1' },
      stdio: 'ignore',
    });
    const log = join(jobs, 'k', 'events.jsonl');
    // Kill it once the first trial's agent phase has started.
    for (let i = 0; i < 600; i++) {
      await new Promise((r) => setTimeout(r, 100));
      if (existsSync(log) && readFileSync(log, 'utf8').includes('"phase":"agent"')) break;
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const { events, lines } = read(log);
    // Every whole line is an event (at most a cut last line is skipped).
    expect(events.length).toBeGreaterThanOrEqual(lines.length - 1);
    expect(events[0]?.type).toBe('job-start');
    expect(events.some((e) => e.type === 'phase-start' && e.phase === 'agent')).toBe(true);
    expect(events.some((e) => e.type === 'job-end')).toBe(false);
  }, 300_000);
});
