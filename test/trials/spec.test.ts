import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { taskChecksum } from '../../src/tasks/checksum.ts';
import '../../src/tasks/multilingual/register.ts';
import { loadTasks } from '../../src/tasks/registry.ts';
import type { Task } from '../../src/tasks/task.ts';
import {
  canonicalJson,
  loadTaskRef,
  parseTrialSpec,
  TRIAL_SPEC_VERSION,
  type TrialSpec,
  trialKey,
} from '../../src/trials/spec.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const sample = resolve('examples/swe-dockerless.jsonl');
const harborTasks = resolve('test/fixtures/harbor/tasks');

function specOf(task: Task, load: TrialSpec['task']['load']): TrialSpec {
  return {
    specVersion: TRIAL_SPEC_VERSION,
    job: { id: '6f1c1c39-6c0a-4f7e-9d0e-0d6a4b1f2a10', name: 'job-1', source: 'swe-dockerless' },
    trial: { name: `${task.name}__1`, attempt: 1 },
    task: { name: task.name, format: task.format, checksum: taskChecksum(task), load },
    agent: { name: 'command', options: { agentCommand: 'true', agentEnv: { A: '1' } } },
    environment: { isolation: 'auto', imageMap: { 'python:3.11': 'berth-base:bookworm' } },
    limits: { processes: 512, memoryBytes: 2 ** 31 },
    timeouts: { multiplier: 1, agentMultiplier: 2, agentTimeoutSec: 60 },
    verification: {},
    config: { dataset: sample, attempts: 1 },
  };
}

describe('TrialSpec', () => {
  it('survives JSON for every task of the bundled sample, Harbor, multi-step and multilingual datasets, and loads back the same task', async () => {
    const datasets = [
      sample,
      harborTasks,
      ...['kotlin-junit', 'separate-artifacts', 'steps-gate'].map((d) =>
        resolve('test/fixtures/harbor-features', d),
      ),
      resolve('examples/multilingual/sample_tasks'),
    ];
    const tasks = (await Promise.all(datasets.map(async (d) => (await loadTasks(d)).tasks))).flat();
    expect(tasks.length).toBeGreaterThan(12);
    for (const task of tasks) {
      const spec = specOf(task, { kind: 'inline', task });
      const text = JSON.stringify(spec);
      const back = parseTrialSpec(text, 'spec.json');
      expect(back).toEqual(spec);
      const loaded = await loadTaskRef(back.task);
      expect(taskChecksum(loaded)).toBe(spec.task.checksum);
      expect(loaded).toEqual(task);
    }
  });

  it('loads a task by dataset path and name, and refuses one whose content changed', async () => {
    const task = (await loadTasks(sample)).tasks[1] as Task;
    const spec = specOf(task, { kind: 'dataset', path: sample });
    expect(await loadTaskRef(spec.task)).toEqual(task);
    const changed = { ...spec.task, checksum: 'a'.repeat(64) };
    await expect(loadTaskRef(changed, 'x.json')).rejects.toThrow(/not the one the spec was made from/);
    await expect(loadTaskRef({ ...spec.task, name: 'nope' }, 'x.json')).rejects.toThrow(/has no task "nope"/);
    // An inline task edited after the spec was made is refused too.
    const edited = { ...task, verifier: { ...task.verifier, timeoutSec: 1 } } as Task;
    await expect(loadTaskRef({ ...spec.task, load: { kind: 'inline', task: edited } })).rejects.toThrow(
      InputError,
    );
  });

  it('names the file and the bad field of a malformed spec', async () => {
    const task = (await loadTasks(sample)).tasks[0] as Task;
    const spec = specOf(task, { kind: 'dataset', path: sample });
    const bad = { ...spec, trial: { name: 'x', attempt: 0 } };
    const file = join(await temp.make('berth-engine-spec-'), 'spec.json');
    await writeFile(file, JSON.stringify(bad));
    expect(() => parseTrialSpec(JSON.stringify(bad), file)).toThrow(InputError);
    try {
      parseTrialSpec(JSON.stringify(bad), file);
    } catch (error) {
      expect((error as InputError).message).toContain(file);
      expect((error as InputError).message).toContain('trial.attempt');
    }
    expect(() => parseTrialSpec('{', file)).toThrow(/not valid JSON/);
    // A trial or job name is a folder name: a spec cannot steer where the trial writes.
    for (const name of ['../../etc', '..', 'a/b', '']) {
      expect(() => parseTrialSpec(JSON.stringify({ ...spec, trial: { name, attempt: 1 } }), file)).toThrow(
        /trial\.name/,
      );
      expect(() => parseTrialSpec(JSON.stringify({ ...spec, job: { ...spec.job, name } }), file)).toThrow(
        /job\.name/,
      );
    }
    expect(() => parseTrialSpec(JSON.stringify({ ...spec, specVersion: 99 }), file)).toThrow(/specVersion/);
  });

  it('has a key that ignores key order and changes with what changes a verdict', async () => {
    const task = (await loadTasks(sample)).tasks[0] as Task;
    const spec = specOf(task, { kind: 'dataset', path: sample });
    const reordered = JSON.parse(canonicalJson(spec)) as TrialSpec;
    expect(Object.keys(reordered)).not.toEqual(Object.keys(spec));
    expect(trialKey(reordered)).toBe(trialKey(spec));
    expect(trialKey({ ...spec, trial: { ...spec.trial, attempt: 2 } })).not.toBe(trialKey(spec));
    expect(trialKey({ ...spec, agent: { name: 'nop', options: {} } })).not.toBe(trialKey(spec));
    // Where the trial runs (its folder, the dataset path) is not part of the key.
    expect(trialKey({ ...spec, config: {} })).toBe(trialKey(spec));
  });
});
