/**
 * Issue 10 §2, at volume: the fixture task `calc` (unsolved) with a command agent that starts
 * 20 chains of hopping writers (each writes 1 to /logs/verifier/reward.txt, forks its successor
 * and exits), through the trial engine with the Docker provider, N times (default 50). Every
 * trial must get reward 0; prints how many did and the mean trial time.
 * Run: `npx tsx bench/hopping-writers.ts [N]`. Needs a Docker engine and `berth-base:bookworm`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CommandAgent } from '../src/agents/command.ts';
import { ImageMap } from '../src/environments/docker/dockerfile.ts';
import { DockerEnvironmentProvider } from '../src/environments/docker/provider.ts';
import { loadHarborTask } from '../src/tasks/harbor/loader.ts';
import { runTrialWith as runTrial } from '../src/trials/trial.ts';
import { HarborVerifier } from '../src/verifiers/harbor.ts';
import { HOPPING_WRITERS } from '../test/tamper/attacks.ts';

const N = Number(process.argv[2] ?? 50);
const BASE = process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
const taskDir = resolve(import.meta.dirname, '..', 'test', 'fixtures', 'harbor', 'tasks', 'calc');
const task = loadHarborTask(taskDir);
const provider = new DockerEnvironmentProvider({ imageMap: new ImageMap({ 'debian:bookworm-slim': BASE }) });
const jobId = `bench-hop-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'berth-bench-hop-'));
const agent = new CommandAgent({ command: `${HOPPING_WRITERS('/logs/verifier/reward.txt')}echo started` });

let zero = 0;
const times: number[] = [];
try {
  for (let i = 0; i < N; i++) {
    const started = performance.now();
    const result = await runTrial({
      task,
      agent,
      attempt: 1,
      trialName: `calc__${i}`,
      trialDir: join(work, `trial-${i}`),
      jobId,
      source: 'bench',
      providers: [provider],
      verifiers: [new HarborVerifier()],
    });
    times.push((performance.now() - started) / 1000);
    const reward = result.verifier_result?.rewards.reward ?? 0;
    if (reward === 0) zero++;
    else console.log(`trial ${i}: REWARD ${reward}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(`${zero}/${N} trials got reward 0 (${N - zero} raised a reward); ${mean.toFixed(2)} s/trial`);
process.exitCode = zero === N ? 0 : 1;
