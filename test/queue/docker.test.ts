/**
 * Harbor tasks on Docker through queue workers (issue 16): the task folders and the dataset's
 * shared bases exist only on the submitter's side (hidden from the two workers by an empty
 * tmpfs in their mount namespaces), travel as blobs, are built and run on Docker by the
 * workers, and give the verdicts of a local run.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE, FIXTURES, skipDocker } from '../docker/helpers.ts';
import { berth } from '../helpers/jobs.ts';
import {
  queueUnavailable,
  startRedis,
  startTestWorker,
  type TestRedis,
  type TestWorker,
} from '../helpers/queue.ts';

const unavailable = queueUnavailable() ?? (skipDocker ? 'no Docker engine answers' : undefined);

function verdicts(jobDir: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of readdirSync(jobDir).sort()) {
    const file = join(jobDir, name, 'result.json');
    if (!existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8'));
    out[name] = [r.berth.status, r.verifier_result?.rewards ?? null];
  }
  return out;
}

describe('Harbor tasks on Docker through workers', () => {
  let dir: string;
  let submitterDir: string;
  let redis: TestRedis;
  let workers: TestWorker[] = [];

  beforeAll(async () => {
    if (unavailable) return; // every test skips, saying why
    dir = mkdtempSync(join(tmpdir(), 'scale-docker-'));
    submitterDir = join(dir, 'submitter');
    cpSync(join(FIXTURES, 'based'), join(submitterDir, 'based'), { recursive: true });
    cpSync(join(FIXTURES, 'tasks', 'calc'), join(submitterDir, 'based', 'tasks', 'calc'), {
      recursive: true,
    });
    redis = await startRedis(join(dir, 'redis'));
    workers = [1, 2].map((i) =>
      startTestWorker(redis.url, join(dir, `worker-${i}`), [submitterDir], ['--env', 'docker']),
    );
    await Promise.all(workers.map((w) => w.waitFor(/worker \S+ on trials-docker/)));
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('oracle and nop give the verdicts of a local run', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(submitterDir, 'jobs');
    for (const agent of ['oracle', 'nop']) {
      const args = [
        'run',
        '-p',
        join(submitterDir, 'based', 'tasks'),
        '-a',
        agent,
        '--image-map',
        `debian:bookworm-slim=${BASE_IMAGE}`,
        '--jobs-dir',
        jobs,
      ];
      const local = berth([...args, '--job-name', `${agent}-local`, '-n', '2']);
      expect(local.code, local.stderr).toBe(0);
      const queued = berth([...args, '--job-name', `${agent}-queued`, '--queue', redis.url]);
      expect(queued.code, queued.stderr + queued.stdout).toBe(0);
      const v = verdicts(join(jobs, `${agent}-queued`));
      expect(Object.keys(v)).toEqual(['calc__1', 'tool-1__1']);
      expect(v).toEqual(verdicts(join(jobs, `${agent}-local`)));
    }
    expect(verdicts(join(jobs, 'oracle-queued'))['calc__1']).toEqual(['resolved', { reward: 1 }]);
    // The workers ran them (their logs arrive once this test yields).
    await Promise.any(workers.map((w) => w.waitFor(/oracle-queued\/tool-1__1: resolved/, 10_000)));
  });
});
