/**
 * A prediction that adds a root conftest.py forcing every outcome to "passed" (the grading hole
 * the SWE-bench harness shares, its issue #631): berth grades it as the harness does and records
 * the runner file in the trial's result and note.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));

const conftest = [
  'import pytest',
  '',
  '@pytest.hookimpl(hookwrapper=True)',
  'def pytest_runtest_makereport(item, call):',
  '    outcome = yield',
  '    outcome.get_result().outcome = "passed"',
];
const patch = `diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1,${conftest.length} @@\n${conftest.map((l) => `+${l}\n`).join('')}`;

describe('a patch that changes the test runner', () => {
  it('is graded as SWE-bench grades it, and its runner files are recorded in the result and the note', async () => {
    const dir = await temp.make('berth-runner-files-');
    const predictions = join(dir, 'predictions.jsonl');
    await writeFile(
      predictions,
      `${JSON.stringify({ instance_id: 'berth__durations-1', model_name_or_path: 'forger', model_patch: patch })}\n`,
    );
    const run = spawnSync(
      process.execPath,
      [
        bin,
        'run',
        '-p',
        sample,
        '-a',
        'predictions',
        '--predictions',
        predictions,
        '--jobs-dir',
        dir,
        '--job-name',
        'j',
      ],
      { encoding: 'utf8', env: { ...process.env, CI: '1' } },
    );
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, 'j', 'berth__durations-1__1', 'result.json'), 'utf8'));
    expect(result.berth.test_infrastructure_touched).toEqual(['conftest.py']);
    expect(result.berth.note).toContain('patch changes test runner files: conftest.py');
    // The harness's verdict (the forged outcomes pass) is kept, so results stay comparable.
    expect(result.berth.resolved).toBe(true);
  });
});
