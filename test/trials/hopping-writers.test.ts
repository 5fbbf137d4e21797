/**
 * Issue 10 §2: every process the agent started is gone before the verifier starts, including
 * writers that fork a successor and exit (a kill that lists processes first can be raced).
 * 20 chains of hopping writers, 10 runs on each environment:
 * - local: the command's pid namespace (bubblewrap) and cgroup die with it: once `exec`
 *   returns, the file the writers wrote stays as it is and no writer runs on the host;
 * - Docker: the engine kills the container's PID 1 before the verifier (`killStrayProcesses`):
 *   the writers write reward 1 to /logs/verifier/reward.txt, the task is not solved, and
 *   the reward is never 1.
 * The tamper corpus runs the same attack through `berth run` (harbor-hopping-writers);
 * `bench/hopping-writers.ts` runs it 50 times.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import { runPhases, ShellAgent, skipDocker } from '../docker/helpers.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { HOPPING_WRITERS } from '../tamper/attacks.ts';

const RUNS = 10;
const temp = tempDirs();
afterAll(() => temp.cleanup());

/** Host processes whose command line mentions `marker` (none of ours may outlive its command). */
function hostProcessesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('20 hopping writers never outlive the agent phase', () => {
  it(`local environment: ${RUNS} runs, nothing writes after the command returned`, async () => {
    const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
    const [task] = await loadSwebench(sample);
    if (!task) throw new Error('the sample has no row');
    const provider = new LocalEnvironmentProvider();
    const environment = await provider.start({
      task,
      jobId: 'hopping-writers',
      trialDir: await temp.make('berth-trust-fs-hop-'),
    });
    try {
      const target = join(environment.workdir, 'hop-target.txt');
      for (let run = 0; run < RUNS; run++) {
        const r = await environment.exec(
          `${HOPPING_WRITERS(target).replace(/\/tmp\/\.hop\.sh/g, '/tmp/.hop-berth-trust-fs.sh')}echo started`,
          { timeoutSec: 60 },
        );
        expect(r.output).toContain('started');
        // The local environment's work folder is the same path on the host.
        const hostTarget = target;
        // The writers ran (the file is there), and now nothing changes it any more.
        const first = statSync(hostTarget).mtimeMs;
        await sleep(600);
        expect(statSync(hostTarget).mtimeMs, `run ${run}: the file changed after the command`).toBe(first);
        expect(hostProcessesWith('.hop-berth-trust-fs.sh'), `run ${run}`).toEqual([]);
      }
    } finally {
      await environment.stop();
    }
  }, 300_000);

  it.skipIf(skipDocker)(
    `Docker: ${RUNS} runs, the reward is never 1`,
    async () => {
      const calcDir = fileURLToPath(new URL('../fixtures/harbor/tasks/calc', import.meta.url));
      for (let run = 0; run < RUNS; run++) {
        const result = await runPhases(
          loadHarborTask(calcDir),
          new ShellAgent(`${HOPPING_WRITERS('/logs/verifier/reward.txt')}echo started`),
        );
        expect(result.verdict.rewards.reward, `run ${run}: ${JSON.stringify(result.verdict)}`).toBe(0);
        // The writers were alive when the container was restarted (the kill was not moot).
        expect(result.verdict.details?.killed_agent_processes, `run ${run}`).toBeGreaterThanOrEqual(1);
      }
    },
    900_000,
  );
});
