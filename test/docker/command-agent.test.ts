/**
 * The `command` agent in a container (real engine): the command runs through the
 * Docker environment's exec at /testbed, sees the instruction at /logs/agent, and
 * its diff is graded in a fresh container, so a forged `sitecustomize.py` it
 * leaves in the image's Python never reaches the test run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CALC_DOCKERFILE, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

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

const row = {
  instance_id: 'calc-1',
  repo: 'berth/calc',
  problem_statement: 'add() subtracts',
  test_patch: testPatch,
  FAIL_TO_PASS: ['test_add'],
  PASS_TO_PASS: ['test_zero'],
  dockerless: { test_cmd: 'python3 tests/test_calc.py', parser: 'tap' },
  dockerfile: CALC_DOCKERFILE,
};

function run(file: string, jobs: string, name: string, command: string) {
  const args = ['run', '-p', file, '-a', 'command', '--agent-command', command];
  const out = spawnSync('node', [bin, ...args, '--jobs-dir', jobs, '--job-name', name, '--json'], {
    encoding: 'utf8',
  });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as { resolved: number };
}

describe.skipIf(skipDocker)('command agent in containers (real engine)', () => {
  it('a fix made by the command resolves; a forged sitecustomize.py left in the container does not', () => {
    const dir = tempDir();
    const file = join(dir, 'rows.jsonl');
    writeFileSync(file, `${JSON.stringify(row)}\n`);
    const jobs = tempDir();

    const fixed = run(
      file,
      jobs,
      'fix',
      'cat "$BERTH_INSTRUCTION_FILE"; echo "logs=$BERTH_AGENT_LOG_DIR cwd=$(pwd)"; sed -i "s/a - b/a + b/" calc.py',
    );
    expect(fixed.resolved).toBe(1);
    const trial = join(jobs, 'fix', 'calc-1__1');
    const stdout = readFileSync(join(trial, 'agent', 'command', 'stdout.txt'), 'utf8');
    expect(stdout).toContain('add() subtracts');
    expect(stdout).toContain('logs=/logs/agent cwd=/testbed');
    expect(readFileSync(join(trial, 'agent', 'patch.diff'), 'utf8')).toContain('+    return a + b');

    // Every Python start prints a passing TAP run and exits: in the agent's container this forges
    // the result; the diff (a comment only) is graded in a fresh container.
    const forge = [
      'site=$(python3 -c "import site; print(site.getsitepackages()[0])")',
      'mkdir -p "$site"',
      `printf '%s\\n' 'import os' 'print("TAP version 13\\n1..2\\nok 1 - test_add\\nok 2 - test_zero", flush=True)' 'os._exit(0)' > "$site/sitecustomize.py"`,
      'echo "# comment" >> calc.py',
    ].join('\n');
    const forged = run(file, jobs, 'forge', forge);
    expect(forged.resolved).toBe(0);
    const result = JSON.parse(readFileSync(join(jobs, 'forge', 'calc-1__1', 'result.json'), 'utf8'));
    expect(result.berth.status).toBe('unresolved');
    expect(result.berth.FAIL_TO_PASS).toEqual({ passed: 0, total: 1 });
  });
});
