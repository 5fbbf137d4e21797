/**
 * The Redis behind the trial queue (issue 16): `redis://[user:pass@]HOST:PORT[/DB]` or
 * `rediss://...` (TLS). BullMQ and berth's own keys (blobs, worker heartbeats, cancellations)
 * share it; every key berth writes starts with `QUEUE_PREFIX`.
 */
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import { UsageError } from '../errors.ts';

/** Prefix of every key in Redis: BullMQ's queues and berth's own keys. */
export const QUEUE_PREFIX = 'berth';

/** The BullMQ queue of trials that run in an environment of kind `kind` (`local`, `docker`). */
export function queueName(kind: string): string {
  return `trials-${kind}`;
}

/** Where the queue is and how to reach it. */
export interface QueueAddress {
  /** The URL as given (with its password). */
  url: string;
  /** CA certificate file (PEM) for a `rediss://` server with a certificate Node does not trust. */
  caFile?: string;
}

/** The URL with its password replaced by `***`, for messages. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * ioredis options of a queue URL (BullMQ makes its connections from them).
 * @throws UsageError for a URL that is not `redis://` or `rediss://`, or an unreadable CA file.
 */
export function redisOptions(address: QueueAddress): RedisOptions {
  let u: URL;
  try {
    u = new URL(address.url);
  } catch {
    throw new UsageError(
      `--queue expects redis://[user:password@]host:port or rediss://..., got ${JSON.stringify(redactedUrl(address.url))}`,
    );
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new UsageError(`--queue expects a redis:// or rediss:// URL, got ${u.protocol}//...`);
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db))
    throw new UsageError(`--queue: the URL's path is a database number, got ${JSON.stringify(db)}`);
  let ca: Buffer | undefined;
  if (address.caFile !== undefined) {
    try {
      ca = readFileSync(address.caFile);
    } catch (error) {
      throw new UsageError(`--queue-ca ${address.caFile}: ${(error as Error).message}`);
    }
  }
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: { servername: u.hostname, ...(ca ? { ca } : {}) } } : {}),
    // BullMQ's requirement for its blocking connections.
    maxRetriesPerRequest: null,
  };
}

/**
 * A connection to the queue's Redis, checked with a PING.
 * @throws UsageError naming the (redacted) URL when Redis cannot be reached or refuses the password.
 */
export async function connectRedis(address: QueueAddress, timeoutSec = 10): Promise<Redis> {
  // The first connection fails at once (a wrong password, an untrusted certificate); once it
  // works, a lost connection is retried as ioredis does.
  const redis = new Redis({
    ...redisOptions(address),
    lazyConnect: true,
    connectTimeout: timeoutSec * 1000,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await redis.connect();
    await redis.ping();
    redis.options.retryStrategy = (times: number) => Math.min(times * 200, 5000);
    return redis;
  } catch (error) {
    redis.disconnect();
    const cause = (lastError ?? (error as Error)).message;
    throw new UsageError(`cannot use the queue at ${redactedUrl(address.url)}: ${cause}`);
  }
}
