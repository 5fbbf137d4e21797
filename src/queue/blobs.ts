/**
 * Content-addressed blobs in the queue's Redis (issue 16: no shared file system). A blob is
 * stored once under the sha256 of its bytes (`berth:blob:<sha256>`), kept `BLOB_TTL_SEC` after
 * its last use; a reader checks the hash of what it gets. Task folders, predictions files and
 * trial folders travel this way; each blob is at most the cap (`--max-blob-mb`), and a bigger
 * one is refused with a message that says how to raise it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Redis } from 'ioredis';
import { UsageError } from '../errors.ts';
import { type CopyReport, extractTarBeneath } from '../util/safe-fs.ts';
import { QUEUE_PREFIX } from './connection.ts';
import { KEEP_FINISHED_SEC } from './protocol.ts';

/** How long a blob stays after it was last stored or read, in seconds (as finished trials: 7 days). */
export const BLOB_TTL_SEC = KEEP_FINISHED_SEC;
/** Default cap of one blob, in bytes (64 MiB; Redis holds at most 512 MiB in one value). */
export const DEFAULT_MAX_BLOB_BYTES = 64 * 1024 * 1024;
/** The largest cap berth accepts, in bytes (Redis's limit of one value). */
export const LIMIT_MAX_BLOB_BYTES = 512 * 1024 * 1024;

/** A blob bigger than the cap. */
export class BlobTooLargeError extends UsageError {}

/**
 * The cap of one blob from `--max-blob-mb` or `BERTH_QUEUE_MAX_BLOB_MB`, in bytes.
 * @throws UsageError for a value that is not a positive number up to 512.
 */
export function maxBlobBytes(mb: string | undefined = process.env.BERTH_QUEUE_MAX_BLOB_MB): number {
  if (mb === undefined || mb === '') return DEFAULT_MAX_BLOB_BYTES;
  const n = Number(mb);
  if (!(n > 0) || n * 1024 * 1024 > LIMIT_MAX_BLOB_BYTES)
    throw new UsageError(`--max-blob-mb expects a number of MiB from 1 to 512, got ${JSON.stringify(mb)}`);
  return Math.round(n * 1024 * 1024);
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** The blobs of one queue. */
export class BlobStore {
  constructor(
    private readonly redis: Redis,
    /** Cap of one blob, in bytes. */
    readonly maxBytes = DEFAULT_MAX_BLOB_BYTES,
  ) {}

  private key(sha: string): string {
    return `${QUEUE_PREFIX}:blob:${sha}`;
  }

  /**
   * Stores `bytes` (once: an existing blob only has its time to live renewed).
   * @param what names the content in the refusal (`task X: folder tests/`).
   * @returns its sha256.
   * @throws BlobTooLargeError over the cap, saying how to raise it.
   */
  async put(bytes: Buffer, what: string): Promise<string> {
    if (bytes.length > this.maxBytes)
      throw new BlobTooLargeError(
        `${what} is ${MiB(bytes.length)} packed, over the queue's cap of ${MiB(this.maxBytes)} per blob; ` +
          `raise it with --max-blob-mb N (or BERTH_QUEUE_MAX_BLOB_MB=N) on berth run and berth worker, up to 512`,
      );
    const sha = sha256Hex(bytes);
    const key = this.key(sha);
    // SET NX stores the first copy; EXPIRE renews an existing one.
    const stored = await this.redis.set(key, bytes, 'EX', BLOB_TTL_SEC, 'NX');
    if (stored === null) await this.redis.expire(key, BLOB_TTL_SEC);
    return sha;
  }

  /**
   * The blob's bytes, checked against its hash.
   * @throws Error when Redis no longer has it or it does not match its hash.
   */
  async get(sha: string): Promise<Buffer> {
    const key = this.key(sha);
    const bytes = await this.redis.getBuffer(key);
    if (bytes === null) throw new Error(`blob ${sha.slice(0, 12)} is not in the queue (expired or removed)`);
    if (sha256Hex(bytes) !== sha) throw new Error(`blob ${sha.slice(0, 12)} does not match its hash`);
    await this.redis.expire(key, BLOB_TTL_SEC);
    return bytes;
  }

  async remove(sha: string): Promise<void> {
    await this.redis.del(this.key(sha));
  }
}

/** A worker's cache of blobs on its own disk (`<root>/blobs/<sha256>`): each is fetched once. */
export class BlobCache {
  constructor(
    private readonly store: BlobStore,
    private readonly dir: string,
  ) {}

  /** The blob's bytes, from the cache (checked) or fetched from the queue into it. */
  async get(sha: string): Promise<Buffer> {
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new Error(`not a blob hash: ${JSON.stringify(sha.slice(0, 80))}`);
    const file = join(this.dir, sha);
    const cached = await readFile(file).catch(() => undefined);
    if (cached && sha256Hex(cached) === sha) return cached;
    const bytes = await this.store.get(sha);
    await mkdir(this.dir, { recursive: true });
    const temp = `${file}.${randomUUID()}.part`;
    await writeFile(temp, bytes);
    await rename(temp, file);
    return bytes;
  }
}

/**
 * Unpacks a blob (a tar) into `dir` as data (no link followed: src/util/safe-fs.ts), at most
 * 4 times its size plus 1 KiB once unpacked.
 */
export function unpackBlob(bytes: Buffer, dir: string): Promise<CopyReport> {
  return extractTarBeneath(Readable.from([bytes]), dir, { maxBytes: 4 * bytes.length + 1024 });
}
