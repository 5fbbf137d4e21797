/**
 * A Kotlin Benchmark task whose tests are the dataset's own grading pipeline, unchanged
 * (test.sh, kotlin_logs_collector.sh, junit_compare.py from BERTH_DATA, copied into a temporary
 * task at test time, never into berth), run by `berth run` on Docker. A stand-in `gradlew`
 * copies whatever reports the agent staged into `build/test-results`. Where test.sh's reward
 * and berth's differ, both are recorded with the reason in result.json and shown in the note
 * of the run's report (issue 12).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dataDir, fixturesDir } from '../helpers/data.ts';
import { BASE_IMAGE, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const reference = join(dataDir, 'kotlin-swe-bench', 'reference-grader');
const hasReference = existsSync(join(reference, 'junit_compare.py'));

const GRADLEW = `#!/bin/sh
# Stands in for Gradle: the reports the agent staged are what the build wrote.
echo "gradle $*"
if [ -d /home/shadow/staged ]; then
  mkdir -p /home/shadow/build/test-results/test && cp /home/shadow/staged/* /home/shadow/build/test-results/test/
fi
`;

function makeTask(): string {
  const dir = join(tempDir('berth-kotlin-ref-task-'), 'calc-kotlin');
  mkdirSync(join(dir, 'environment'), { recursive: true });
  mkdirSync(join(dir, 'tests'), { recursive: true });
  writeFileSync(
    join(dir, 'task.toml'),
    'version = "1.0"\n\n[agent]\ntimeout_sec = 60.0\n\n[verifier]\ntimeout_sec = 120.0\n\n[environment]\nnetwork_mode = "no-network"\n',
  );
  writeFileSync(join(dir, 'instruction.md'), 'Make demo.CalcTest.adds() pass.\n');
  writeFileSync(join(dir, 'environment', 'gradlew'), GRADLEW);
  writeFileSync(
    join(dir, 'environment', 'Dockerfile'),
    'FROM debian:bookworm-slim\nCOPY gradlew /home/shadow/gradlew\nRUN chmod 755 /home/shadow/gradlew\nWORKDIR /home/shadow\n',
  );
  for (const f of ['test.sh', 'kotlin_logs_collector.sh', 'junit_compare.py'])
    copyFileSync(join(reference, f), join(dir, 'tests', f));
  writeFileSync(join(dir, 'tests', 'test.patch'), '');
  copyFileSync(
    join(fixturesDir, 'kotlin-reference', 'expected_tests.json'),
    join(dir, 'tests', 'expected_tests.json'),
  );
  return dir;
}

function run(task: string, agentCommand: string) {
  const jobs = tempDir('berth-kotlin-ref-jobs-');
  const r = spawnSync(
    'node',
    [
      bin,
      'run',
      '-p',
      task,
      '-a',
      'command',
      '--agent-command',
      agentCommand,
      '--image-map',
      `debian:bookworm-slim=${BASE_IMAGE}`,
      '--jobs-dir',
      jobs,
      '--job-name',
      'k',
    ],
    { encoding: 'utf8', timeout: 280_000 },
  );
  const jobDir = join(jobs, 'k');
  const trial = readdirSync(jobDir).find(
    (d) => existsSync(join(jobDir, d, 'result.json')) && d !== 'result.json',
  );
  const result = trial ? JSON.parse(readFileSync(join(jobDir, trial, 'result.json'), 'utf8')) : undefined;
  return { r, result };
}

describe.skipIf(skipDocker)(
  'Kotlin Benchmark task graded by berth beside its own pipeline (real engine)',
  () => {
    it('no report: test.sh writes 1, berth 0; both rewards and the reason in result.json and the report', async (ctx) => {
      if (!hasReference) ctx.skip(`the dataset's grader is not in ${reference} (set BERTH_DATA)`);
      const { r, result } = run(makeTask(), 'true');
      expect(r.status, r.stderr).toBe(0);
      expect(result.verifier_result.rewards).toEqual({ reward: 0 });
      const details = result.berth.verifier_details;
      expect(details.test_sh_rewards).toEqual({ reward: 1 });
      expect(details.reference_disagreement).toMatchObject({ berth_reward: 0, reference_reward: 1 });
      expect(details.reference_disagreement.reason).toMatch(/no JUnit report exists/);
      expect(result.berth.note).toMatch(
        /the dataset's test\.sh says reward 1, berth 0: no JUnit report exists/,
      );
      // The run's report (the terminal table) shows it.
      expect(r.stdout).toMatch(/test\.sh says reward 1, berth 0/);
    });

    it('a report with &#x1B; in <system-out>: test.sh 0, berth 1; agreeing reports record nothing', async (ctx) => {
      if (!hasReference) ctx.skip(`the dataset's grader is not in ${reference} (set BERTH_DATA)`);
      const xml = (extra: string) =>
        `<?xml version="1.0" encoding="UTF-8"?>\\n<testsuite name="demo.CalcTest" tests="2"><testcase name="adds()" classname="demo.CalcTest"/><testcase name="subtracts()" classname="demo.CalcTest"/>${extra}</testsuite>\\n`;
      const stage = (extra: string) =>
        `mkdir -p /home/shadow/staged && printf '${xml(extra)}' > /home/shadow/staged/TEST-demo.CalcTest.xml`;
      const ansi = run(makeTask(), stage('<system-out>&#x1B;[32mok&#x1B;[0m</system-out>'));
      expect(ansi.result.verifier_result.rewards).toEqual({ reward: 1 });
      expect(ansi.result.berth.verifier_details.reference_disagreement).toMatchObject({
        berth_reward: 1,
        reference_reward: 0,
      });
      expect(ansi.result.berth.note).toMatch(/character reference XML 1\.0 forbids/);
      const plain = run(makeTask(), stage(''));
      expect(plain.result.verifier_result.rewards).toEqual({ reward: 1 });
      expect(plain.result.berth.verifier_details.test_sh_rewards).toEqual({ reward: 1 });
      expect(plain.result.berth.verifier_details.reference_disagreement).toBeUndefined();
    });
  },
);
