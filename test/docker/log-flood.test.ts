/**
 * Breaker finding 6 in containers (real engine): a task's test.sh that writes its reward and
 * then floods /logs/verifier with a deep folder and thousands of files. The trial ends within
 * the verifier timeout plus berth's copy grace, at most the entry cap lands in the trial folder,
 * nothing deeper than the depth cap, what was left out is in `berth.not_copied.verifier`, and
 * the reward is the one test.sh wrote (copied first, whatever sorts before it).
 */
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { DEFAULT_COPY_LIMITS } from '../../src/util/safe-fs.ts';
import { VERIFIER_COPY_GRACE_SEC } from '../../src/verifiers/harbor.ts';
import { createVerifiers } from '../../src/verifiers/registry.ts';
import { FIXTURES, fixtureImageMap, JOB_ID, ShellAgent, skipDocker, tempDir } from './helpers.ts';

const VERIFIER_TIMEOUT_SEC = 20;

/** Entries below `dir` and the deepest level (1: `dir`'s own entries). */
function measure(dir: string): { entries: number; depth: number } {
  let entries = 0;
  let depth = 0;
  const walk = (d: string, level: number) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      entries++;
      depth = Math.max(depth, level);
      if (e.isDirectory()) walk(join(d, e.name), level + 1);
    }
  };
  walk(dir, 1);
  return { entries, depth };
}

describe.skipIf(skipDocker)('a test.sh that floods /logs/verifier (Docker)', () => {
  it('a 200-deep folder and 12 000 files: bounded in time, entries and depth; the reward is read', async () => {
    const taskDir = join(tempDir('berth-fixcopy-flood-'), 'fixcopy-flood');
    cpSync(join(FIXTURES, 'tasks', 'calc'), taskDir, { recursive: true });
    writeFileSync(
      join(taskDir, 'task.toml'),
      `version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = ${VERIFIER_TIMEOUT_SEC}.0\n[environment]\nbuild_timeout_sec = 300.0\nmemory_mb = 512\n`,
    );
    writeFileSync(
      join(taskDir, 'tests', 'test.sh'),
      [
        '#!/bin/bash',
        // The reward sorts after the flood (`d`, `many/`): a copy in archive order would reach it last.
        'echo 1 > /logs/verifier/reward.txt',
        'cd /logs/verifier && for i in $(seq 200); do mkdir d && cd d || exit 1; done && echo x > deep.txt',
        'mkdir -p /logs/verifier/many && cd /logs/verifier/many && for i in $(seq 12000); do : > f$i; done',
        'echo 0 > /logs/verifier/many/reward.txt',
        'echo flooded',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const trialDir = join(tempDir('berth-fixcopy-trial-'), 'trial');
    const started = Date.now();
    const result = await runTrial({
      task: loadHarborTask(taskDir),
      agent: new ShellAgent('true'),
      attempt: 1,
      trialName: 'fixcopy-flood',
      trialDir,
      jobId: JOB_ID,
      source: 'test',
      providers: [new DockerEnvironmentProvider({ imageMap: fixtureImageMap() })],
      verifiers: createVerifiers(),
    });
    const verifier = result.verifier;
    expect(verifier).toBeTruthy();
    const verifierSec =
      (Date.parse(verifier?.finished_at ?? '') - Date.parse(verifier?.started_at ?? '')) / 1000;
    // The phase ends by its timeout plus the copy's grace (a few seconds for the engine's calls).
    expect(verifierSec).toBeLessThan(VERIFIER_TIMEOUT_SEC + VERIFIER_COPY_GRACE_SEC + 5);
    expect((Date.now() - started) / 1000).toBeLessThan(240);
    // The reward test.sh wrote, not many/reward.txt's, not the default 0 of a missing file.
    expect(result.exception_info).toBeNull();
    expect(result.verifier_result?.rewards).toEqual({ reward: 1 });
    expect(result.berth.status).toBe('resolved');
    const copied = measure(join(trialDir, 'verifier'));
    expect(copied.entries).toBeLessThanOrEqual(DEFAULT_COPY_LIMITS.maxEntries + 2);
    expect(copied.depth).toBeLessThanOrEqual(DEFAULT_COPY_LIMITS.maxDepth + 1);
    const notCopied = (result.berth.not_copied?.verifier ?? []).join('\n');
    expect(notCopied).toMatch(/\(too-deep\)/);
    expect(notCopied).toMatch(/\(too-many\)|\(timed-out\)/);
    expect(notCopied).not.toMatch(/^reward\.txt/m);
  });
});
