/**
 * `jobs/<job>/events.jsonl` of a real `berth run` on the Docker engine (a single-step Harbor
 * task with the oracle): read back with the schema, the job's and the trial's log agree, every
 * phase that starts ends, and the verdict and trial end carry the reward.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type BerthEvent, parseEventLine } from '../../src/trials/events.ts';
import { BASE_IMAGE, FIXTURES, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

function read(file: string): { events: BerthEvent[]; lines: string[] } {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  return { lines, events: lines.map(parseEventLine).filter((e): e is BerthEvent => e !== undefined) };
}

describe.skipIf(skipDocker)('events.jsonl of a berth run job on Docker', () => {
  it('holds the job, the trial, its phases in order (each ended) and its verdict', () => {
    const jobs = tempDir('berth-engine-docker-events-');
    const run = spawnSync(
      process.execPath,
      [
        bin,
        'run',
        '-p',
        join(FIXTURES, 'tasks', 'calc'),
        '-a',
        'oracle',
        '--image-map',
        `debian:bookworm-slim=${BASE_IMAGE}`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'd',
      ],
      { encoding: 'utf8', env: { ...process.env, CI: '1' }, timeout: 240_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const { events, lines } = read(join(jobs, 'd', 'events.jsonl'));
    expect(events).toHaveLength(lines.length);
    expect(events[0]).toMatchObject({ type: 'job-start', job: 'd', n_trials: 1 });
    expect(events.at(-1)).toMatchObject({ type: 'job-end', n_trials: 1, n_resolved: 1, cancelled: false });
    const trial = readdirSync(join(jobs, 'd')).find((name) => name.startsWith('calc')) as string;
    const own = events.filter((e) => 'trial' in e && e.trial === trial);
    expect(own.at(0)).toMatchObject({ type: 'trial-start', task: 'calc', agent: { name: 'oracle' } });
    expect(own.at(-1)).toMatchObject({ type: 'trial-end', status: 'resolved', rewards: { reward: 1 } });
    const started = own.flatMap((e) => (e.type === 'phase-start' ? [e.phase] : []));
    const ended = own.flatMap((e) => (e.type === 'phase-end' ? [e.phase] : []));
    expect(started[0]).toBe('environment');
    expect(started.indexOf('agent')).toBeGreaterThan(0);
    expect(started.indexOf('verifier')).toBeGreaterThan(started.indexOf('agent'));
    expect(ended).toEqual(started);
    expect(
      own.filter((e) => e.type === 'phase-end').every((e) => e.type === 'phase-end' && !e.exception),
    ).toBe(true);
    expect(own.find((e) => e.type === 'verdict')).toMatchObject({
      status: 'resolved',
      rewards: { reward: 1 },
    });
    // The oracle's solve.sh and the verifier's test.sh ran as commands of their phases.
    expect(own.some((e) => e.type === 'command' && e.phase === 'verifier')).toBe(true);
    // The trial's own log holds the same events.
    expect(read(join(jobs, 'd', trial, 'events.jsonl')).events).toEqual(own);
  }, 300_000);
});
