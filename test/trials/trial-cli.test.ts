/**
 * A trial is data: the same spec run in this process and by `berth trial SPEC.json` in a child
 * process gives the same result.json, byte for byte once timestamps, durations and ids are set
 * aside.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTasks } from '../../src/tasks/registry.ts';
import type { Task } from '../../src/tasks/task.ts';
import { runTrial } from '../../src/trials/engine.ts';
import { type BerthEvent, parseEventLine } from '../../src/trials/events.ts';
import { makeTrialSpec, type TrialSpec } from '../../src/trials/spec.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = resolve('examples/swe-dockerless.jsonl');

/** The result as text with what differs between two runs of one spec blanked. */
function comparable(file: string): string {
  const volatile = /^(id|trial_uri|started_at|finished_at|occurred_at|exception_traceback|duration_sec)$/;
  return JSON.stringify(
    JSON.parse(readFileSync(file, 'utf8')),
    (key, value) => (volatile.test(key) ? '<volatile>' : value),
    2,
  );
}

function events(file: string): BerthEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map(parseEventLine)
    .filter((e): e is BerthEvent => e !== undefined);
}

async function bothWays(spec: TrialSpec): Promise<{ inProcess: string; child: string; stdout: string }> {
  const dir = await temp.make('berth-engine-trialcli-');
  const inProcess = join(dir, 'in-process');
  await runTrial(spec, () => {}, { trialDir: inProcess });
  const specFile = join(dir, 'spec.json');
  writeFileSync(specFile, JSON.stringify(spec));
  const child = join(dir, 'child');
  const run = spawnSync('node', [bin, 'trial', specFile, '--trial-dir', child, '--events'], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1' },
  });
  expect(run.status, run.stderr).toBe(0);
  return { inProcess, child, stdout: run.stdout };
}

describe('berth trial SPEC.json', () => {
  it.each(['oracle', 'nop'])(
    '%s: a child process writes the same result.json as an in-process run',
    async (agent) => {
      const task = (await loadTasks(sample)).tasks[0] as Task;
      const spec = makeTrialSpec({
        job: { id: '0b0c7d5e-8a77-4c1e-9d1b-2f6d1f1e7a01', name: 'spec-test', source: 'swe-dockerless' },
        trialName: `${task.name}__1`,
        attempt: 1,
        task,
        agent: { name: agent, options: {} },
        verification: agent === 'nop' ? { verifyEmptyPatch: true } : {},
      });
      const { inProcess, child, stdout } = await bothWays(JSON.parse(JSON.stringify(spec)) as TrialSpec);
      const a = comparable(join(inProcess, 'result.json'));
      expect(comparable(join(child, 'result.json'))).toBe(a);
      expect(JSON.parse(a).berth.status).toBe(agent === 'oracle' ? 'resolved' : 'unresolved');
      // The event logs tell the same story; --events streams them on stdout too.
      const types = (list: BerthEvent[]) => list.map((e) => `${e.type}${'phase' in e ? `:${e.phase}` : ''}`);
      const childEvents = events(join(child, 'events.jsonl'));
      expect(types(childEvents)).toEqual(types(events(join(inProcess, 'events.jsonl'))));
      expect(types(stdout.split('\n').flatMap((l) => parseEventLine(l) ?? []))).toEqual(types(childEvents));
      expect(types(childEvents)[0]).toBe('trial-start');
      expect(types(childEvents).at(-1)).toBe('trial-end');
      expect(types(childEvents)).toContain('verdict');
    },
  );

  it('refuses a malformed spec with exit 2 naming the file and field', async () => {
    const dir = await temp.make('berth-engine-trialcli-');
    const specFile = join(dir, 'bad.json');
    writeFileSync(specFile, JSON.stringify({ specVersion: 1, job: {} }));
    const run = spawnSync('node', [bin, 'trial', specFile], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(specFile);
    expect(run.stderr).toMatch(/: job\.\w+: /);
    expect(run.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});
