/**
 * Trials on a queue (issue 16), measured in one run against baselines from the same run, on a
 * real redis-server (started here on a free port) and real `berth worker` processes:
 *
 * 1. Throughput against worker count: trials dominated by waiting (the `command` agent runs
 *    `sleep S` on the bundled sample) through 1 worker, then through 3 workers (one trial at a
 *    time each). Target: 3 workers at least 2.7x the throughput of 1.
 * 2. Queue overhead per trial: the bundled sample with the oracle, `-k 3` (12 trials), run
 *    locally with `-n 1` and through the queue with 1 worker taking one trial at a time,
 *    interleaved over rounds; the median difference over the trial count. Target: under 50 ms.
 *
 * Wall-clock times of the submitter's `berth run` (its start-up counts in both). The workers are
 * started before each measurement (long-running, as in production).
 *
 *   npx tsx bench/queue-workers.ts [--sleep 8] [--attempts 3] [--rounds 3]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, sample } from '../test/helpers/jobs.ts';
import { startRedis, startTestWorker, type TestWorker } from '../test/helpers/queue.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] ? (args[index + 1] as string) : fallback;
};
const sleepSec = Number(option('--sleep', '8'));
const attempts = Number(option('--attempts', '3'));
const rounds = Number(option('--rounds', '3'));

const dir = mkdtempSync(join(tmpdir(), 'scale-bench-'));
const redis = await startRedis(join(dir, 'redis'));
let jobCount = 0;

/** Seconds `berth run ...` takes; throws when it fails. */
function timedRun(extra: string[]): number {
  const started = performance.now();
  const run = spawnSync(
    'node',
    [bin, 'run', '-p', sample, '--jobs-dir', join(dir, 'jobs'), '--job-name', `j${++jobCount}`, ...extra],
    { encoding: 'utf8', env: { ...process.env, CI: '1' }, maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`berth run exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
  return seconds;
}

async function withWorkers<T>(count: number, body: () => T): Promise<T> {
  const workers: TestWorker[] = [];
  for (let i = 0; i < count; i++)
    workers.push(startTestWorker(redis.url, join(dir, `w${jobCount}-${i}`), []));
  try {
    await Promise.all(workers.map((w) => w.waitFor(/worker \S+ on trials-local/)));
    return body();
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

try {
  const sleepy = [
    '-a',
    'command',
    '--agent-command',
    `sleep ${sleepSec}`,
    '-k',
    String(attempts),
    '--queue',
    redis.url,
  ];
  const trials = 4 * attempts;
  const one = await withWorkers(1, () => timedRun(sleepy));
  const three = await withWorkers(3, () => timedRun(sleepy));
  const speedup = one / three;
  console.log(
    `throughput, ${trials} trials of sleep ${sleepSec}: 1 worker ${one.toFixed(1)} s, 3 workers ${three.toFixed(1)} s: ` +
      `${speedup.toFixed(2)}x (target >= 2.7x) ${speedup >= 2.7 ? 'ok' : 'MISSED'}`,
  );

  const oracle = ['-a', 'oracle', '-k', '3'];
  const differences: number[] = [];
  await withWorkers(1, () => {
    for (let round = 0; round < rounds; round++) {
      const local = timedRun([...oracle, '-n', '1']);
      const queued = timedRun([...oracle, '--queue', redis.url]);
      differences.push((queued - local) / 12);
      console.log(
        `round ${round + 1}: local ${local.toFixed(2)} s, queue ${queued.toFixed(2)} s (12 trials)`,
      );
    }
  });
  const overheadMs = median(differences) * 1000;
  console.log(
    `queue overhead per trial: ${overheadMs.toFixed(0)} ms (median of ${rounds}; target < 50 ms) ${overheadMs < 50 ? 'ok' : 'MISSED'}`,
  );
} finally {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
