/**
 * Trials on a queue (issue 16), measured in one run against baselines from the same run, on a
 * real redis-server (started here on a free port) and real `berth worker` processes:
 *
 * 1. Throughput against worker count: trials dominated by waiting (the `command` agent runs
 *    `sleep S` on the bundled sample) through 1 worker, then through 3 workers (one trial at a
 *    time each). Target: 3 workers at least 2.7x the throughput of 1.
 * 2. Queue overhead per trial: the bundled sample with the oracle, `-k 3` (12 trials), run
 *    locally with `-n 1` and through the queue with 1 worker taking one trial at a time,
 *    interleaved over rounds. Each job's time outside its trials (wall clock minus the sum of
 *    its trials' own durations from result.json: start-up, planning, job files, and for the
 *    queue enqueue, pick-up, events and the trial folder's round trip) is compared, so the
 *    trials' own noise on a loaded machine cancels; the median difference over the trial count.
 *    Target: under 50 ms.
 *
 * Wall-clock times of the submitter's `berth run` (its start-up counts in both). The workers are
 * started before each measurement (long-running, as in production).
 *
 *   npx tsx bench/queue-workers.ts [--sleep 8] [--attempts 3] [--rounds 3] [--only throughput|overhead]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
/** `throughput`, `overhead` or `both`. */
const only = option('--only', 'both');

const dir = mkdtempSync(join(tmpdir(), 'scale-bench-'));
const redis = await startRedis(join(dir, 'redis'));
let jobCount = 0;

/** Seconds the trials of a job folder took themselves (their result.json times), summed. */
function trialSeconds(jobDir: string): number {
  let total = 0;
  for (const name of readdirSync(jobDir)) {
    const file = join(jobDir, name, 'result.json');
    if (!existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8')) as { started_at: string; finished_at: string };
    total += (Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000;
  }
  return total;
}

/** Seconds `berth run ...` takes; throws when it fails. */
function timedRun(extra: string[]): number {
  return timedJob(extra).seconds;
}

/** `berth run ...`: its wall-clock seconds and the seconds outside its trials. */
function timedJob(extra: string[]): { seconds: number; outside: number } {
  const started = performance.now();
  const jobName = `j${++jobCount}`;
  const run = spawnSync(
    'node',
    [bin, 'run', '-p', sample, '--jobs-dir', join(dir, 'jobs'), '--job-name', jobName, ...extra],
    { encoding: 'utf8', env: { ...process.env, CI: '1' }, maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`berth run exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
  return { seconds, outside: seconds - trialSeconds(join(dir, 'jobs', jobName)) };
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
  if (only !== 'overhead') {
    const one = await withWorkers(1, () => timedRun(sleepy));
    const three = await withWorkers(3, () => timedRun(sleepy));
    const speedup = one / three;
    console.log(
      `throughput, ${trials} trials of sleep ${sleepSec}: 1 worker ${one.toFixed(1)} s, 3 workers ${three.toFixed(1)} s: ` +
        `${speedup.toFixed(2)}x (target >= 2.7x) ${speedup >= 2.7 ? 'ok' : 'MISSED'}`,
    );
  }
  if (only !== 'throughput') {
    const oracle = ['-a', 'oracle', '-k', '3'];
    const differences: number[] = [];
    await withWorkers(1, () => {
      for (let round = 0; round < rounds; round++) {
        const local = timedJob([...oracle, '-n', '1']);
        const queued = timedJob([...oracle, '--queue', redis.url]);
        // Time outside the trials themselves (start-up, planning, writing, and for the queue:
        // enqueue, pick-up, events, the folder's round trip), so trial-time noise cancels.
        differences.push((queued.outside - local.outside) / 12);
        console.log(
          `round ${round + 1}: local ${local.seconds.toFixed(2)} s (${local.outside.toFixed(2)} s outside trials), ` +
            `queue ${queued.seconds.toFixed(2)} s (${queued.outside.toFixed(2)} s outside trials), 12 trials`,
        );
      }
    });
    const overheadMs = median(differences) * 1000;
    console.log(
      `queue overhead per trial: ${overheadMs.toFixed(0)} ms (median of ${rounds}; target < 50 ms) ${overheadMs < 50 ? 'ok' : 'MISSED'}`,
    );
  }
} finally {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
