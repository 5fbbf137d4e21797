/**
 * Harbor's `--ve/--verifier-env`, `--artifact`, `--agent-setup-timeout-multiplier` and
 * `--force-build` on a Harbor task in Docker, through the CLI (issue 17).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BASE_IMAGE, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const berth = (...args: string[]) =>
  spawnSync('node', [bin, ...args], { encoding: 'utf8', timeout: 240_000 });

/** A Harbor task whose tests pass only when the verifier sees FLAG=on, and whose solution leaves /app/out.txt. */
function flagTask(): string {
  const dir = join(tempDir('berth-harbor-flags-'), 'flag-task');
  for (const sub of ['environment', 'solution', 'tests']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(
    join(dir, 'task.toml'),
    'version = "1.0"\n\n[agent]\ntimeout_sec = 60.0\n\n[verifier]\ntimeout_sec = 60.0\n\n[environment]\nallow_internet = false\n',
  );
  writeFileSync(join(dir, 'instruction.md'), 'Write hello to /app/out.txt.\n');
  writeFileSync(join(dir, 'environment', 'Dockerfile'), 'FROM debian:bookworm-slim\nWORKDIR /app\n');
  writeFileSync(join(dir, 'solution', 'solve.sh'), '#!/bin/bash\necho hello > /app/out.txt\n', {
    mode: 0o755,
  });
  writeFileSync(
    join(dir, 'tests', 'test.sh'),
    '#!/bin/bash\nif [ "$FLAG" = on ] && grep -q hello /app/out.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    { mode: 0o755 },
  );
  return dir;
}

describe.skipIf(skipDocker)("Harbor's verifier and artifact flags in Docker", () => {
  it('--ve reaches the verifier, --artifact is collected, the multipliers are recorded', () => {
    const task = flagTask();
    const jobs = tempDir('berth-harbor-flags-jobs-');
    const map = ['--image-map', `debian:bookworm-slim=${BASE_IMAGE}`];
    const without = berth('run', '-p', task, '-a', 'oracle', '-o', jobs, '--job-name', 'plain', ...map);
    expect(without.status, without.stderr).toBe(0);
    expect(readFileSync(join(jobs, 'plain', 'flag-task__1', 'verifier', 'reward.txt'), 'utf8').trim()).toBe(
      '0',
    );

    const run = berth(
      'run',
      '-p',
      task,
      '-a',
      'oracle',
      '-o',
      jobs,
      '--job-name',
      'flags',
      '--ve',
      'FLAG=on',
      '--artifact',
      '/app/out.txt',
      '--agent-setup-timeout-multiplier',
      '3',
      '--force-build',
      ...map,
    );
    expect(run.status, run.stderr).toBe(0);
    const trial = join(jobs, 'flags', 'flag-task__1');
    expect(readFileSync(join(trial, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    expect(readFileSync(join(trial, 'artifacts', 'out.txt'), 'utf8')).toBe('hello\n');
    const config = JSON.parse(readFileSync(join(jobs, 'flags', 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      agent_setup_timeout_multiplier: 3,
      verifier: { env: { FLAG: 'on' } },
      artifacts: ['/app/out.txt'],
      environment: { type: 'docker', force_build: true, delete: true },
    });
  });
});
