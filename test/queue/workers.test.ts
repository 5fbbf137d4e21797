/**
 * `berth run --queue` with three real `berth worker` processes on a real Redis (issue 16). Each
 * worker has its own root and cannot see the submitter's folder (an empty tmpfs over it in its
 * mount namespace): task content and the predictions file travel as blobs through Redis.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berth, examples, sample } from '../helpers/jobs.ts';
import {
  queueUnavailable,
  startRedis,
  startSubmitter,
  startTestWorker,
  type TestRedis,
  type TestWorker,
  workerRoot,
} from '../helpers/queue.ts';

const unavailable = queueUnavailable();

/** Per trial: status, resolved, rewards. */
function verdicts(jobDir: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of readdirSync(jobDir).sort()) {
    const file = join(jobDir, name, 'result.json');
    if (!existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8'));
    out[name] = [r.berth.status, r.berth.resolved, r.verifier_result?.rewards ?? null];
  }
  return out;
}

function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = `${prefix}${e.name}`;
    return e.isDirectory() ? [`${path}/`, ...tree(join(dir, e.name), `${path}/`)] : [path];
  });
}

describe('trials on a queue: three workers, no shared folder', () => {
  let dir: string;
  let submitterDir: string;
  let redis: TestRedis;
  let workers: TestWorker[] = [];
  let url: string;

  beforeAll(async () => {
    if (unavailable) return; // every test skips, saying why
    dir = mkdtempSync(join(tmpdir(), 'scale-queue-'));
    submitterDir = join(dir, 'submitter');
    mkdirSync(join(submitterDir, 'predictions'), { recursive: true });
    copyFileSync(sample, join(submitterDir, 'sample.jsonl'));
    copyFileSync(
      join(examples, 'predictions', 'partial.jsonl'),
      join(submitterDir, 'predictions', 'partial.jsonl'),
    );
    redis = await startRedis(join(dir, 'redis'));
    url = redis.url;
    workers = [1, 2, 3].map((i) => startTestWorker(url, workerRoot(dir, i), [submitterDir]));
    await Promise.all(workers.map((w) => w.waitFor(/worker \S+ on trials-local/)));
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a worker cannot read the submitter folder', (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    // The workers' wrapper, reading the dataset instead of starting a worker.
    const read = spawnSync('unshare', [
      '-m',
      'sh',
      '-c',
      `mount -t tmpfs -o size=1m berth-hidden '${submitterDir}' && cat '${join(submitterDir, 'sample.jsonl')}'`,
    ]);
    expect(read.status).not.toBe(0);
    expect(read.stderr.toString()).toMatch(/No such file/);
    expect(existsSync(join(submitterDir, 'sample.jsonl'))).toBe(true);
  });

  it('the bundled sample with -k 3 gives the verdicts of a local run, same files, no host path on the queue', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(submitterDir, 'jobs');
    const args = ['-p', join(submitterDir, 'sample.jsonl'), '-a', 'oracle', '-k', '3', '--jobs-dir', jobs];
    const local = berth(['run', ...args, '--job-name', 'local', '-n', '2']);
    expect(local.code, local.stderr).toBe(0);
    const queued = berth(['run', ...args, '--job-name', 'queued', '--queue', url]);
    expect(queued.code, queued.stderr).toBe(0);
    expect(Object.keys(verdicts(join(jobs, 'queued')))).toHaveLength(12);
    expect(verdicts(join(jobs, 'queued'))).toEqual(verdicts(join(jobs, 'local')));
    expect(tree(join(jobs, 'queued'))).toEqual(tree(join(jobs, 'local')));
    const client = new Redis(url);
    try {
      // Every worker ran some of them (BullMQ records the worker's name, its id).
      const keys = (await client.keys('berth:trials-local:*')).filter((k) => /:[0-9a-f]{64}$/.test(k));
      const by = await Promise.all(keys.map((k) => client.hget(k, 'pb')));
      expect(new Set(by.filter(Boolean)).size).toBe(3);
      // No trial on the queue names a submitter path.
      const data = (await Promise.all(keys.map((k) => client.hget(k, 'data').catch(() => null)))).filter(
        (d): d is string => typeof d === 'string',
      );
      expect(data.length).toBeGreaterThanOrEqual(12);
      for (const d of data) expect(d).not.toContain(submitterDir);
    } finally {
      client.disconnect();
    }
    // Resume by job name: everything is kept, nothing runs again.
    const again = berth(['run', ...args, '--job-name', 'queued', '--queue', url]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/12 kept from a previous run/);
  });

  it('a predictions file only the submitter has travels as a blob: verdicts as a local run', (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(submitterDir, 'jobs');
    const args = [
      '-p',
      join(submitterDir, 'sample.jsonl'),
      '-a',
      'predictions',
      '--predictions',
      join(submitterDir, 'predictions', 'partial.jsonl'),
      '-i',
      'berth__[ct]*',
      '--jobs-dir',
      jobs,
    ];
    const local = berth(['run', ...args, '--job-name', 'partial-local']);
    expect(local.code, local.stderr).toBe(0);
    const queued = berth(['run', ...args, '--job-name', 'partial-queued', '--queue', url]);
    expect(queued.code, queued.stderr).toBe(0);
    const v = verdicts(join(jobs, 'partial-queued'));
    expect(Object.keys(v)).toHaveLength(2);
    expect(v).toEqual(verdicts(join(jobs, 'partial-local')));
  });

  it('Ctrl-C on the submitter cancels queued and running trials; workers beat while they run', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(submitterDir, 'jobs');
    const run = startSubmitter([
      '-p',
      join(submitterDir, 'sample.jsonl'),
      '-a',
      'command',
      '--agent-command',
      'sleep 120',
      '-k',
      '3',
      '--jobs-dir',
      jobs,
      '--job-name',
      'interrupted',
      '--queue',
      url,
    ]);
    await Promise.all(workers.map((w) => w.waitFor(/interrupted\/\S+: started/)));
    const client = new Redis(url);
    try {
      // Each worker's heartbeat names the trial it runs.
      const beats = await Promise.all((await client.keys('berth:worker:*')).map((k) => client.get(k)));
      const running = beats.flatMap((b) => Object.values(JSON.parse(b ?? '{}').running ?? {}));
      expect(running.filter((name) => String(name).startsWith('berth__'))).toHaveLength(3);
      run.proc.kill('SIGINT');
      const code = await run.done;
      expect(code, run.output()).toBe(130);
      // The three running trials came back cancelled; the nine queued ones never started.
      const results = verdicts(join(jobs, 'interrupted'));
      expect(Object.values(results).map((v) => (v as unknown[])[0])).toEqual([
        'cancelled',
        'cancelled',
        'cancelled',
      ]);
      for (const w of workers) expect(w.log()).toMatch(/cancelled by the submitter/);
      const waiting = await client.llen('berth:trials-local:wait');
      expect(waiting).toBe(0);
      await new Promise((r) => setTimeout(r, 1000));
      for (const w of workers) expect(w.log().match(/interrupted\/\S+: started/g)).toHaveLength(1);
    } finally {
      client.disconnect();
    }
  });

  it('kill -9 of a worker mid-job and of the submitter mid-job: nothing lost, nothing twice', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(submitterDir, 'jobs');
    const sleepy = [
      '-p',
      join(submitterDir, 'sample.jsonl'),
      '-a',
      'command',
      '--agent-command',
      'sleep 4',
      '-k',
      '2',
      '--jobs-dir',
      jobs,
      '--job-name',
      'killed',
      '--queue',
      url,
    ];
    const first = startSubmitter(sleepy);
    // A worker dies in the middle of a trial: its trial goes back to the queue.
    const victim = workers[0] as TestWorker;
    await victim.waitFor(/killed\/\S+: started/);
    // Once its trial has a local environment (its folder under the worker's tmp/).
    const victimTmp = join(workerRoot(dir, 1), 'tmp');
    while (!existsSync(victimTmp) || readdirSync(victimTmp).length === 0)
      await new Promise((r) => setTimeout(r, 50));
    victim.kill9();
    // The submitter dies too, once some trials finished.
    const deadline = Date.now() + 120_000;
    while ((first.output().match(/#\d/g) ?? []).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    first.proc.kill('SIGKILL');
    await first.done;
    // The worker comes back on the same root: it cleans what its earlier life left.
    const reborn = startTestWorker(url, workerRoot(dir, 1), [submitterDir]);
    workers[0] = reborn;
    await reborn.waitFor(/worker \S+ on trials-local/);
    // Its earlier life's trial folder and local environment are gone.
    expect(reborn.log()).toMatch(/removed 1 folder\(s\) an earlier run of this worker left in trials\//);
    expect(reborn.log()).toMatch(/removed 1 folder\(s\) an earlier run of this worker left in tmp\//);
    // The submitter is run again with the same job name.
    const second = startSubmitter(sleepy);
    const code = await second.done;
    expect(code, second.output()).toBe(0);
    const results = verdicts(join(jobs, 'killed'));
    expect(Object.keys(results)).toHaveLength(8);
    for (const [, value] of Object.entries(results)) expect((value as unknown[])[0]).toBe('empty_patch');
    // Each trial completed once on the queue: the runs the workers finished, by trial.
    const finished = workers
      .map((w) => w.log())
      .concat(victim.log())
      .join('\n')
      .match(/killed\/\S+: empty_patch/g);
    expect(new Set(finished).size).toBe(8);
    expect(finished).toHaveLength(8);
    const events = readFileSync(join(jobs, 'killed', 'events.jsonl'), 'utf8');
    expect(events).toMatch(/"type":"job-end"/);
  });
});
