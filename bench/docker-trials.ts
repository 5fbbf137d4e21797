/**
 * A berth Docker trial against a bare `docker run` of the same work on the
 * same image, in one run: the fixture task `calc` solved by its oracle and
 * verified by its tests.
 *
 * - bare: `docker run --rm --network none -v tests:/tests:ro -v solution:/solution:ro IMAGE
 *   bash -c 'bash /solution/solve.sh && bash /tests/test.sh'` (writing the reward into a
 *   mounted folder), N times in a row;
 * - berth: the trial engine (`runTrial`) with the Docker provider, the script oracle and
 *   the Harbor verifier, N times in a row (image cached: built once before timing);
 * - `-n 2`: 2N berth trials two at a time against the same 2N one at a time.
 *
 * Prints the overhead per trial (target <= 1.5 s) and the speed-up from -n 2.
 * Run: `npx tsx bench/docker-trials.ts [N]` (default N = 5). Needs a Docker engine and
 * the base image `berth-base:bookworm` (`bash .ci/setup-docker.sh`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import PQueue from 'p-queue';
import { ScriptOracleAgent } from '../src/agents/script-oracle.ts';
import { ImageMap } from '../src/environments/docker/dockerfile.ts';
import { DockerEnvironmentProvider } from '../src/environments/docker/provider.ts';
import { loadHarborTask } from '../src/tasks/harbor/loader.ts';
import { runTrialWith as runTrial } from '../src/trials/trial.ts';
import { HarborVerifier } from '../src/verifiers/harbor.ts';

const N = Number(process.argv[2] ?? 5);
const BASE = process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
const taskDir = resolve(import.meta.dirname, '..', 'test', 'fixtures', 'harbor', 'tasks', 'calc');
const task = loadHarborTask(taskDir);
const provider = new DockerEnvironmentProvider({ imageMap: new ImageMap({ 'debian:bookworm-slim': BASE }) });
const jobId = `bench-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'berth-bench-'));

const image = await provider.prepareImage(task, { jobId });
console.log(`image ${image} (built or cached before timing)`);

async function bare(i: number): Promise<number> {
  const out = join(work, `bare-${i}`);
  const started = performance.now();
  await execa('docker', [
    'run',
    '--rm',
    '--network',
    'none',
    '--label',
    `dev.berth.job=${jobId}`,
    '-v',
    `${join(taskDir, 'tests')}:/tests:ro`,
    '-v',
    `${join(taskDir, 'solution')}:/solution:ro`,
    '-v',
    `${out}:/logs/verifier`,
    image,
    'bash',
    '-c',
    'bash /solution/solve.sh > /dev/null && bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1',
  ]);
  return (performance.now() - started) / 1000;
}

async function berth(i: number): Promise<number> {
  const trialDir = join(work, `trial-${i}`);
  const started = performance.now();
  const result = await runTrial({
    task,
    agent: new ScriptOracleAgent(),
    attempt: 1,
    trialName: `calc__${i}`,
    trialDir,
    jobId,
    source: 'bench',
    providers: [provider],
    verifiers: [new HarborVerifier()],
  });
  const seconds = (performance.now() - started) / 1000;
  if (result.verifier_result?.rewards.reward !== 1)
    throw new Error(
      `trial ${i}: reward ${JSON.stringify(result.verifier_result)} ${JSON.stringify(result.exception_info)}`,
    );
  return seconds;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
await bare(-1);
await berth(-1); // warm both paths
const bareTimes: number[] = [];
const berthTimes: number[] = [];
for (let i = 0; i < N; i++) {
  bareTimes.push(await bare(i));
  berthTimes.push(await berth(i));
}
const seqStart = performance.now();
for (let i = 0; i < 2 * N; i++) await berth(100 + i);
const seq = (performance.now() - seqStart) / 1000;
const queue = new PQueue({ concurrency: 2 });
const parStart = performance.now();
await Promise.all(Array.from({ length: 2 * N }, (_, i) => queue.add(() => berth(200 + i))));
const par = (performance.now() - parStart) / 1000;

const overhead = mean(berthTimes) - mean(bareTimes);
console.log(
  `bare docker run : ${mean(bareTimes).toFixed(2)} s/trial (${bareTimes.map((t) => t.toFixed(2)).join(' ')})`,
);
console.log(
  `berth trial     : ${mean(berthTimes).toFixed(2)} s/trial (${berthTimes.map((t) => t.toFixed(2)).join(' ')})`,
);
console.log(
  `overhead        : ${overhead.toFixed(2)} s/trial (target <= 1.5 s) ${overhead <= 1.5 ? 'OK' : 'OVER'}`,
);
console.log(
  `${2 * N} trials    : -n 1 ${seq.toFixed(1)} s, -n 2 ${par.toFixed(1)} s, speed-up x${(seq / par).toFixed(2)}`,
);
rmSync(work, { recursive: true, force: true });
