/**
 * `berth run --rules harbor` (src/trials/verifier-environment.ts, `inPlace`): a Harbor task whose
 * solution lives outside the work folder (a file in /etc, a service the agent leaves running) is
 * verified where the agent left it, as Harbor does. Under berth's default rules the same trial is
 * verified in a fresh container (the /etc file is gone) after the agent's processes were killed,
 * so it is not resolved; the change is recorded under both rules. Real Docker, the real CLI.
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE, FIXTURES, skipDocker } from '../docker/helpers.ts';
import { berth, sample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

/** The calc fixture with a solution and tests of its own. */
function task(dir: string, name: string, solve: string, test: string): void {
  const into = join(dir, name);
  cpSync(join(FIXTURES, 'tasks', 'calc'), into, { recursive: true });
  writeFileSync(join(into, 'solution', 'solve.sh'), `#!/bin/bash\n${solve}\n`, { mode: 0o755 });
  writeFileSync(join(into, 'tests', 'test.sh'), `#!/bin/bash\n${test}\n`, { mode: 0o755 });
}

interface Trial {
  task: string;
  reward: number | undefined;
  findings: { kind: string; veto: boolean; message: string }[];
}

function trials(jobDir: string): Trial[] {
  return readdirSync(jobDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => JSON.parse(readFileSync(join(jobDir, e.name, 'result.json'), 'utf8')))
    .map((r) => ({
      task: r.task_name,
      reward: r.verifier_result?.rewards?.reward,
      findings: r.berth?.tampering?.findings ?? [],
    }))
    .sort((a, b) => a.task.localeCompare(b.task));
}

describe.skipIf(skipDocker)('--rules harbor: verified where the agent left it', () => {
  it('a solution in /etc and a service the agent started pass under harbor rules only; the change is recorded under both', async () => {
    const dir = await temp.make('berth-harbor-rules-');
    const tasks = join(dir, 'tasks');
    task(
      tasks,
      'etc-config',
      'echo "mode = fast" > /etc/calc.conf',
      'grep -qx "mode = fast" /etc/calc.conf && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt',
    );
    task(
      tasks,
      'service',
      // A "server" the agent leaves running, which the tests look for.
      "nohup bash -c 'exec -a calc-server sleep 600' >/dev/null 2>&1 &",
      // (the base image has no procps: the process table read from /proc)
      'if grep -qs calc-server /proc/[0-9]*/cmdline; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi',
    );
    const jobs = join(dir, 'jobs');
    const common = ['run', '-p', tasks, '-a', 'oracle', '--env', 'docker', '--jobs-dir', jobs];
    const map = ['--image-map', `debian:bookworm-slim=${BASE_IMAGE}`];
    const byDefault = berth([...common, ...map, '--job-name', 'default']);
    expect(byDefault.code, byDefault.stderr).toBe(0);
    const byHarbor = berth([...common, ...map, '--job-name', 'harbor', '--rules', 'harbor']);
    expect(byHarbor.code, byHarbor.stderr).toBe(0);

    const [etcDefault, serviceDefault] = trials(join(jobs, 'default'));
    const [etcHarbor, serviceHarbor] = trials(join(jobs, 'harbor'));
    // berth's rules: a fresh container without /etc/calc.conf; the agent's server killed.
    expect(etcDefault?.reward).toBe(0);
    expect(etcDefault?.findings).toEqual([
      expect.objectContaining({
        kind: 'environment-changed',
        veto: false,
        message: expect.stringMatching(/\/etc\/calc\.conf.*fresh environment/),
      }),
    ]);
    expect(serviceDefault?.reward).toBe(0);
    // Harbor's rules: verified in place.
    expect(etcHarbor?.reward).toBe(1);
    expect(etcHarbor?.findings).toEqual([
      expect.objectContaining({
        kind: 'environment-changed',
        veto: false,
        message: expect.stringMatching(/\/etc\/calc\.conf.*--rules harbor/),
      }),
    ]);
    expect(serviceHarbor?.reward).toBe(1);
  }, 300_000);
});

it('--rules harbor on SWE-bench rows is refused with exit 2', async () => {
  const jobs = await temp.make('berth-harbor-rules-rows-');
  const run = berth(['run', '-p', sample, '-a', 'oracle', '--rules', 'harbor', '--jobs-dir', jobs]);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/--rules harbor applies to Harbor tasks/);
  expect(readdirSync(jobs)).toEqual([]);
});
