/**
 * SWE-bench rows that name a Docker image or carry a Dockerfile run in a
 * container through the same trial steps as the local environment: the gold
 * patch resolves, the empty patch does not, a wrong patch leaves the
 * FAIL_TO_PASS test failing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import { BASE_IMAGE, CALC_DOCKERFILE, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

const patch = `diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
`;

const wrong = patch.replace('a + b', 'a * b');

const testPatch = `diff --git a/tests/test_calc.py b/tests/test_calc.py
new file mode 100644
--- /dev/null
+++ b/tests/test_calc.py
@@ -0,0 +1,7 @@
+import sys
+sys.path.insert(0, ".")
+from calc import add
+print("TAP version 13")
+print("1..2")
+print(("ok" if add(2, 3) == 5 else "not ok") + " 1 - test_add")
+print(("ok" if add(0, 0) == 0 else "not ok") + " 2 - test_zero")
`;

function row(id: string, extra: Record<string, unknown>) {
  return {
    instance_id: id,
    repo: 'berth/calc',
    problem_statement: 'add() subtracts',
    patch,
    test_patch: testPatch,
    FAIL_TO_PASS: ['test_add'],
    PASS_TO_PASS: ['test_zero'],
    dockerless: { test_cmd: 'python3 tests/test_calc.py', parser: 'tap' },
    ...extra,
  };
}

describe('SWE-bench rows with Docker', () => {
  it('a row with docker_image / image_name / dockerfile becomes a docker environment at /testbed without network', async () => {
    const dir = tempDir();
    const file = join(dir, 'rows.jsonl');
    writeFileSync(
      file,
      [
        row('a', { docker_image: 'img:1' }),
        row('b', { image_name: 'img:2', workdir: '/repo' }),
        row('c', { dockerfile: CALC_DOCKERFILE }),
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const tasks = await loadSwebench(file);
    expect(tasks.map((t) => t.environment)).toEqual([
      { kind: 'docker', image: 'img:1', workdir: '/testbed', network: { mode: 'no-network' } },
      { kind: 'docker', image: 'img:2', workdir: '/repo', network: { mode: 'no-network' } },
      { kind: 'docker', dockerfile: CALC_DOCKERFILE, workdir: '/testbed', network: { mode: 'no-network' } },
    ]);
  });
});

describe.skipIf(skipDocker)('SWE-bench rows in containers (real engine)', () => {
  it("an image without the repository at the row's path is the environment's error, not patch_failed", () => {
    // The user's case: the bundled DockerLess rows mapped onto a plain base image.
    const jobs = tempDir();
    const examples = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
    const run = spawnSync(
      'node',
      [
        bin,
        'run',
        '-p',
        examples,
        '-e',
        'docker',
        '-l',
        '1',
        '--image-map',
        `*=${BASE_IMAGE}`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'no-repo',
        '--json',
      ],
      { encoding: 'utf8', timeout: 240_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const trial = JSON.parse(run.stdout).trials[0];
    const result = JSON.parse(
      readFileSync(join(jobs, 'no-repo', `${trial.trial_name}`, 'result.json'), 'utf8'),
    );
    expect(result.berth.status).toBe('error');
    expect(result.berth.status).not.toBe('patch_failed');
    expect(result.exception_info.exception_type).toBe('EnvironmentRepositoryError');
    const message: string = result.exception_info.exception_message;
    expect(message).toContain(`image ${BASE_IMAGE} has no git repository at /testbed`);
    expect(message).toContain('--image-map');
    expect(message).toContain('-e local');
    // The agent never ran and no patch was applied.
    expect(result.berth.patch_apply ?? null).toBeNull();
  }, 300_000);

  it('gold resolves, empty and wrong patches do not', () => {
    const dir = tempDir();
    const file = join(dir, 'rows.jsonl');
    writeFileSync(file, `${JSON.stringify(row('calc-1', { dockerfile: CALC_DOCKERFILE }))}\n`);
    const jobs = tempDir();
    const gold = spawnSync(
      'node',
      [bin, 'run', '-p', file, '-a', 'oracle', '--jobs-dir', jobs, '--job-name', 'gold', '--json'],
      {
        encoding: 'utf8',
      },
    );
    expect(gold.status, gold.stderr).toBe(0);
    const report = JSON.parse(gold.stdout);
    expect(report.resolved).toBe(1);
    const result = JSON.parse(readFileSync(join(jobs, 'gold', 'calc-1__1', 'result.json'), 'utf8'));
    expect(result.berth.status).toBe('resolved');
    expect(result.berth.isolated).toBe(true);

    const predictions = join(dir, 'preds.jsonl');
    writeFileSync(
      predictions,
      `${JSON.stringify({ instance_id: 'calc-1', model_name_or_path: 'wrong', model_patch: wrong })}\n`,
    );
    const bad = spawnSync(
      'node',
      [
        bin,
        'run',
        '-p',
        file,
        '-a',
        'predictions',
        '--predictions',
        predictions,
        '--jobs-dir',
        jobs,
        '--job-name',
        'wrong',
        '--json',
      ],
      { encoding: 'utf8' },
    );
    expect(bad.status, bad.stderr).toBe(0);
    const badReport = JSON.parse(bad.stdout);
    expect(badReport.resolved).toBe(0);
    const trial = badReport.trials[0];
    expect(trial.FAIL_TO_PASS).toMatchObject({ passed: 0, total: 1 });
    expect(trial.PASS_TO_PASS).toMatchObject({ passed: 1, total: 1 });

    const nop = spawnSync(
      'node',
      [bin, 'run', '-p', file, '-a', 'nop', '--jobs-dir', jobs, '--job-name', 'nop', '--json'],
      { encoding: 'utf8' },
    );
    expect(nop.status, nop.stderr).toBe(0);
    expect(JSON.parse(nop.stdout).resolved).toBe(0);
  });
});
