/**
 * Trials that call models, on queue workers: the model gateway runs on each worker with the
 * worker's own key (the submitter has none, and no key travels on the queue). berth's own agent,
 * deckhand, against the scripted model server, on two instances of the bundled sample: one the
 * script solves, one it does not.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deckhandArgs, rowOf, turn } from '../helpers/deckhand-job.ts';
import {
  queueUnavailable,
  startRedis,
  startSubmitter,
  startTestWorker,
  type TestRedis,
  type TestWorker,
} from '../helpers/queue.ts';
import {
  type ReceivedRequest,
  type ScriptedModelServer,
  type ScriptStep,
  startScriptedModelServer,
} from '../helpers/scripted-model-server.ts';

const unavailable = queueUnavailable();
const KEY = 'sk-worker-only-7c21e9';
function script(request: ReceivedRequest): ScriptStep {
  const usage = { input: 1000, output: 50 };
  if (turn(request) > 0)
    return { reply: { toolCalls: [{ name: 'finish', input: { summary: 'done' } }], usage, cost: 0.001 } };
  const row = rowOf(request);
  const command =
    row.instance_id === 'berth__csvline-1'
      ? `git apply <<'BERTH_PATCH'\n${row.patch}BERTH_PATCH`
      : 'echo todo > NOTES.txt';
  return { reply: { text: 'On it.', toolCalls: [{ name: 'bash', input: { command } }], usage, cost: 0.001 } };
}

describe('trials that call models, on workers', () => {
  let dir: string;
  let redis: TestRedis;
  let worker: TestWorker;
  let server: ScriptedModelServer;

  beforeAll(async () => {
    if (unavailable) return; // every test skips, saying why
    dir = mkdtempSync(join(tmpdir(), 'scale-models-'));
    redis = await startRedis(join(dir, 'redis'));
    server = await startScriptedModelServer(script);
    // The key only in the worker's env file (berth worker --env-file); the worker names the
    // server its key may go to (--model-base-url).
    writeFileSync(join(dir, 'worker.env'), `OPENROUTER_API_KEY=${KEY}\n`);
    worker = startTestWorker(
      redis.url,
      join(dir, 'worker'),
      [],
      ['--env-file', join(dir, 'worker.env'), '--model-base-url', `${server.url}/v1`],
      { OPENROUTER_API_KEY: '' },
    );
    await worker.waitFor(/worker \S+ on trials-local/);
  });

  afterAll(async () => {
    await worker?.stop();
    await server?.close();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("calls the model through the worker's gateway with the worker's key", async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(dir, 'jobs');
    // Not spawnSync: the scripted model server answers from this process.
    const run = startSubmitter(
      [
        ...deckhandArgs(server.url, jobs, 'models'),
        '-i',
        'berth__csvline-1',
        '-i',
        'berth__toposort-1',
        '--queue',
        redis.url,
      ],
      { OPENROUTER_API_KEY: '' },
    );
    const code = await run.done;
    expect(code, run.output()).toBe(0);
    const result = (trial: string) =>
      JSON.parse(readFileSync(join(jobs, 'models', trial, 'result.json'), 'utf8'));
    expect(result('berth__csvline-1__1').berth.status).toBe('resolved');
    expect(result('berth__toposort-1__1').berth.resolved).toBe(false);
    expect(result('berth__csvline-1__1').agent_result.n_input_tokens).toBe(2000);
    // The upstream saw the worker's key; the queue never held it.
    expect(server.requests.length).toBeGreaterThanOrEqual(4);
    for (const request of server.requests)
      expect(String(request.headers.authorization)).toBe(`Bearer ${KEY}`);
    const events = readFileSync(join(jobs, 'models', 'events.jsonl'), 'utf8');
    expect(events.match(/"type":"model-call"/g)?.length).toBe(4);
    const client = new Redis(redis.url);
    try {
      const keys = await client.keys('berth:*');
      for (const key of keys) {
        const type = await client.type(key);
        const text =
          type === 'string'
            ? await client.get(key)
            : type === 'hash'
              ? JSON.stringify(await client.hgetall(key))
              : '';
        expect(text ?? '').not.toContain(KEY);
      }
    } finally {
      client.disconnect();
    }
  });

  it("a job naming another server for the model never gets the worker's key there", async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const thief = await startScriptedModelServer([{ reply: { text: 'thanks' } }]);
    try {
      const run = startSubmitter(
        [
          ...deckhandArgs(thief.url, join(dir, 'jobs'), 'thief'),
          '-i',
          'berth__csvline-1',
          '--queue',
          redis.url,
        ],
        { OPENROUTER_API_KEY: '' },
      );
      expect(await run.done, run.output()).toBe(0);
      expect(thief.requests).toEqual([]);
      const result = JSON.parse(
        readFileSync(join(dir, 'jobs', 'thief', 'berth__csvline-1__1', 'result.json'), 'utf8'),
      );
      expect(result.berth.status).toBe('error');
      expect(result.exception_info.exception_message).toMatch(/never sends its key where the queue says/);
    } finally {
      await thief.close();
    }
  });
});
