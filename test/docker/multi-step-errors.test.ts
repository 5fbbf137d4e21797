/**
 * Issue 12's engine items on minimal multi-step Harbor tasks (real Docker engine):
 * a step that errors under `mean` is an error of the trial, visible at the top level, and the
 * note counts only the steps whose agent ran; each step keeps its own timestamps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { parseEventLine } from '../../src/trials/events.ts';
import type { ExtendedTrialResult } from '../../src/trials/record.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import { HarborVerifier } from '../../src/verifiers/harbor.ts';
import {
  fixtureImageMap,
  JOB_ID,
  ShellAgent,
  skipDocker,
  tempDir,
  twoStepTask as twoStepHarborTask,
} from './helpers.ts';

/** The two-step task (`mean`) of helpers.ts; `two` is what step two does. */
function twoStepTask(two: { setup?: string; test: string }): string {
  return twoStepHarborTask({
    'steps/two/tests/test.sh': `#!/bin/bash\n${two.test}\n`,
    ...(two.setup ? { 'steps/two/workdir/setup.sh': `#!/bin/bash\n${two.setup}\n` } : {}),
  });
}

async function trial(taskDir: string): Promise<ExtendedTrialResult> {
  return runTrialWith({
    task: loadHarborTask(taskDir),
    agent: new ShellAgent('sleep 1; date +%s%N > /tmp/ran'),
    attempt: 1,
    trialName: 't__1',
    trialDir: join(tempDir('berth-engine-trial-'), 't__1'),
    jobId: JOB_ID,
    source: 'test',
    providers: [new DockerEnvironmentProvider({ imageMap: fixtureImageMap() })],
    verifiers: [new HarborVerifier()],
  });
}

describe.skipIf(skipDocker)('multi-step errors (issue 12)', () => {
  it("mean: step two's set-up fails -> the trial is an error at the top level; 1/2 steps run", async () => {
    const r = await trial(twoStepTask({ setup: 'exit 3', test: 'echo 1 > /logs/verifier/reward.txt' }));
    expect(r.step_results?.map((s) => s.step_name)).toEqual(['one', 'two']);
    expect(r.step_results?.[1]?.exception_info?.exception_type).toBe('StepSetupError');
    expect(r.step_results?.[1]?.agent_execution).toBeNull();
    expect(r.exception_info?.exception_type).toBe('StepSetupError');
    expect(r.exception_info?.exception_message).toMatch(/^step two: setup.sh exited with code 3/);
    expect(r.berth.status).toBe('error');
    expect(r.berth.resolved).toBe(false);
    // Harbor's mean over the steps with a verdict is still recorded.
    expect(r.verifier_result?.rewards).toEqual({ reward: 1 });
    expect(r.berth.note).toContain('1/2 steps run');
    expect(r.berth.note).not.toContain('2/2 steps run');
  });

  it("mean: step two's test.sh writes no reward -> the trial is an error", async () => {
    const r = await trial(twoStepTask({ test: 'true' }));
    expect(r.step_results?.[1]?.exception_info?.exception_type).toBe('RewardFileNotFoundError');
    expect(r.exception_info?.exception_type).toBe('RewardFileNotFoundError');
    expect(r.berth.status).toBe('error');
    expect(r.berth.note).toContain('2/2 steps run');
  });

  it('each step keeps its own timestamps; the trial timing spans them', async () => {
    const r = await trial(twoStepTask({ test: 'echo 1 > /logs/verifier/reward.txt' }));
    expect(r.berth.status).toBe('resolved');
    const [one, two] = r.step_results ?? [];
    const t1 = one?.agent_execution;
    const t2 = two?.agent_execution;
    expect(t1 && t2).toBeTruthy();
    // Step one's times were overwritten by step two's (a shared object).
    expect(t1?.finished_at).not.toBe(t2?.finished_at);
    expect(Date.parse(t1?.finished_at ?? '')).toBeLessThanOrEqual(Date.parse(t2?.started_at ?? ''));
    expect(one?.verifier?.finished_at).not.toBe(two?.verifier?.finished_at);
    expect(r.agent_execution).toEqual({ started_at: t1?.started_at, finished_at: t2?.finished_at });
    // The trial's event log names each step's phases.
    const events = readFileSync(join(new URL(r.trial_uri).pathname, 'events.jsonl'), 'utf8')
      .split('\n')
      .flatMap((line) => parseEventLine(line) ?? []);
    const phases = events.flatMap((e) =>
      e.type === 'phase-start' ? [`${e.phase}${e.step ? `:${e.step}` : ''}`] : [],
    );
    expect(phases).toEqual([
      'environment',
      'agent:one',
      'artifacts:one',
      'verifier:one',
      'agent:two',
      'artifacts:two',
      'verifier:two',
    ]);
    expect(
      events.filter((e) => e.type === 'verdict').map((e) => (e.type === 'verdict' ? e.step : '')),
    ).toEqual(['one', 'two']);
    expect(r.verifier).toEqual({
      started_at: one?.verifier?.started_at,
      finished_at: two?.verifier?.finished_at,
    });
  });
});
