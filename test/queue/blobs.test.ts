/** Content-addressed blobs in a real Redis: stored once, checked on read, capped with a refusal that says how to raise the cap. */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tarPath } from '../../src/environments/docker/tar.ts';
import { BlobCache, BlobStore, BlobTooLargeError, maxBlobBytes, sha256Hex } from '../../src/queue/blobs.ts';
import { connectRedis } from '../../src/queue/connection.ts';
import { materializeSpec } from '../../src/queue/content.ts';
import type { TrialSpec } from '../../src/trials/spec.ts';
import { queueUnavailable, startRedis, type TestRedis } from '../helpers/queue.ts';

const unavailable = queueUnavailable();

describe('blobs on the queue', () => {
  let dir: string;
  let redis: TestRedis;

  beforeAll(async () => {
    if (unavailable) return; // every test skips, saying why
    dir = mkdtempSync(join(tmpdir(), 'scale-blobs-'));
    redis = await startRedis(join(dir, 'redis'));
  });
  afterAll(async () => {
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores a blob once under its hash, refuses one over the cap, and a cache rejects altered bytes', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const client = await connectRedis({ url: redis.url });
    try {
      const store = new BlobStore(client, 1024);
      const bytes = Buffer.from('task content');
      const sha = await store.put(bytes, 'task t: tests/');
      expect(sha).toBe(sha256Hex(bytes));
      expect(await store.put(bytes, 'task t: tests/')).toBe(sha);
      expect(await client.keys('berth:blob:*')).toEqual([`berth:blob:${sha}`]);
      expect(await client.ttl(`berth:blob:${sha}`)).toBeGreaterThan(0);
      await expect(store.put(Buffer.alloc(4096), 'task big: /data/big')).rejects.toThrow(BlobTooLargeError);
      await expect(store.put(Buffer.alloc(4096), 'task big: /data/big')).rejects.toThrow(
        /task big: \/data\/big is 0\.0 MiB packed, over the queue's cap .*--max-blob-mb N/,
      );
      // A worker's cache fetches once, and never trusts a file that does not match its name.
      const cacheDir = join(dir, 'cache');
      const cache = new BlobCache(store, cacheDir);
      expect((await cache.get(sha)).toString()).toBe('task content');
      expect(readdirSync(cacheDir)).toEqual([sha]);
      writeFileSync(join(cacheDir, sha), 'altered');
      expect((await cache.get(sha)).toString()).toBe('task content');
      // Redis holding other bytes under the name is refused.
      await client.set(`berth:blob:${sha}`, 'forged');
      rmSync(join(cacheDir, sha));
      await expect(cache.get(sha)).rejects.toThrow(/does not match its hash/);
      await expect(cache.get('../../etc/passwd')).rejects.toThrow(/not a blob hash/);
    } finally {
      client.disconnect();
    }
  });

  it('a queued reference that leaves its blob is refused by the worker (a hostile spec)', async (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const client = await connectRedis({ url: redis.url });
    try {
      const store = new BlobStore(client);
      const tar = await tarPath(join(dir, 'redis'), 'content', { mtime: 0 });
      const sha = await store.put(tar, 'a folder');
      const cache = new BlobCache(store, join(dir, 'hostile-cache'));
      const spec = (path: string) =>
        ({ task: { load: { kind: 'inline', task: { dir: path } } } }) as unknown as TrialSpec;
      const ok = await materializeSpec(spec(`berth-blob:${sha}/inner`), cache, join(dir, 'content'));
      expect(JSON.stringify(ok)).toContain(join(dir, 'content', sha, 'inner'));
      await expect(
        materializeSpec(spec(`berth-blob:${sha}/../../etc`), cache, join(dir, 'content')),
      ).rejects.toThrow(/leaves its blob/);
    } finally {
      client.disconnect();
    }
  });

  it('reads the cap from --max-blob-mb, at most 512', () => {
    expect(maxBlobBytes('2')).toBe(2 * 1024 * 1024);
    expect(maxBlobBytes(undefined)).toBe(64 * 1024 * 1024);
    expect(() => maxBlobBytes('600')).toThrow(/from 1 to 512/);
    expect(() => maxBlobBytes('x')).toThrow(/--max-blob-mb/);
  });
});
