/**
 * Harbor tasks on Docker through queue workers (issue 16): the task folders and the dataset's
 * shared bases exist only on the submitter's side (hidden from the two workers by an empty
 * tmpfs in their mount namespaces), travel as blobs, are built and run on Docker by the
 * workers, and give the verdicts of a local run.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE, FIXTURES, skipDocker } from '../docker/helpers.ts';
import { berth } from '../helpers/jobs.ts';
import {
  queueUnavailable,
  startRedis,
  startSubmitter,
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
    expect(verdicts(join(jobs, 'oracle-queued')).calc__1).toEqual(['resolved', { reward: 1 }]);
    // The workers ran them (their logs arrive once this test yields).
    await Promise.any(workers.map((w) => w.waitFor(/oracle-queued\/tool-1__1: resolved/, 10_000)));
  });

  it('a worker killed mid-trial has its container removed when it starts again, and runs the trial again', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    // Only worker 1 takes trials here.
    await workers[1]?.stop();
    const jobs = join(submitterDir, 'jobs');
    const run = startSubmitter([
      '-p',
      join(submitterDir, 'based', 'tasks'),
      '-i',
      'calc',
      '-a',
      'command',
      '--agent-command',
      'sleep 15',
      '--image-map',
      `debian:bookworm-slim=${BASE_IMAGE}`,
      '--jobs-dir',
      jobs,
      '--job-name',
      'killed-docker',
      '--queue',
      redis.url,
    ]);
    const root = join(dir, 'worker-1');
    const id = readFileSync(join(root, 'worker-id'), 'utf8').trim();
    const containers = () =>
      spawnSync(
        'docker',
        ['ps', '-a', '--filter', 'label=dev.berth.owner', '--format', '{{.ID}} {{.Label "dev.berth.owner"}}'],
        {
          encoding: 'utf8',
        },
      )
        .stdout.split('\n')
        .filter((line) => line.endsWith(`/${id}`));
    const deadline = Date.now() + 120_000;
    while (containers().length === 0) {
      if (Date.now() > deadline)
        throw new Error(
          `no container of worker ${id}:\n${workers[0]?.log()}\n${workers[1]?.log()}\n${run.output()}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
    workers[0]?.kill9();
    await new Promise((r) => setTimeout(r, 500));
    const dead = containers();
    expect(dead.length).toBeGreaterThan(0);
    const reborn = startTestWorker(redis.url, root, [submitterDir], ['--env', 'docker']);
    workers[0] = reborn;
    await reborn.waitFor(/worker \S+ on trials-docker/);
    expect(reborn.log()).toMatch(/removed \d+ folder\(s\) and [1-9]\d* Docker resource\(s\)/);
    // The dead process's containers are gone. The reborn worker has the same worker id but another
    // owner (its own pid): it may already have started the trial again in a new container.
    expect(containers().filter((line) => dead.includes(line))).toEqual([]);
    // The trial comes back once, from the worker that ran it again.
    expect(await run.done, run.output()).toBe(0);
    const results = verdicts(join(jobs, 'killed-docker')) as Record<string, [string, unknown]>;
    expect(Object.keys(results)).toEqual(['calc__1']);
    // The agent changed nothing: calc's test.sh then writes no reward, as with the nop agent.
    expect(results.calc__1?.[0]).toBe('error');
    const result = JSON.parse(readFileSync(join(jobs, 'killed-docker', 'calc__1', 'result.json'), 'utf8'));
    expect(result.exception_info.exception_type).toBe('RewardFileNotFoundError');
  });
});
