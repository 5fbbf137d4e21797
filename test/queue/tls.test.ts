/**
 * The queue over TLS with a password (`rediss://:PASSWORD@...`): Debian's redis-server with a
 * self-signed certificate made here by openssl; a worker and a submitter that trust it through
 * `--queue-ca`. A wrong password and an untrusted certificate are refused with exit 2 and a
 * message that never shows the password.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berth, sample } from '../helpers/jobs.ts';
import {
  queueUnavailable,
  startRedis,
  startTestWorker,
  type TestRedis,
  type TestWorker,
} from '../helpers/queue.ts';

const unavailable =
  queueUnavailable() ??
  (spawnSync('openssl', ['version']).status !== 0 ? 'openssl is not installed' : undefined);
const PASSWORD = 'queue-secret-4bd1';

describe('the queue over TLS with a password', () => {
  let dir: string;
  let redis: TestRedis;
  let worker: TestWorker;
  let url: string;
  let ca: string;

  beforeAll(async () => {
    if (unavailable) return; // every test skips, saying why
    dir = mkdtempSync(join(tmpdir(), 'scale-tls-'));
    ca = join(dir, 'cert.pem');
    const made = spawnSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      ca,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    expect(made.status, made.stderr.toString()).toBe(0);
    redis = await startRedis(
      join(dir, 'redis'),
      [
        '--tls-port',
        'PORT',
        '--tls-cert-file',
        ca,
        '--tls-key-file',
        join(dir, 'key.pem'),
        '--tls-ca-cert-file',
        ca,
        '--tls-auth-clients',
        'no',
        '--requirepass',
        PASSWORD,
      ],
      'rediss',
    );
    url = `rediss://:${PASSWORD}@127.0.0.1:${redis.port}`;
    worker = startTestWorker(url, join(dir, 'worker'), [], ['--queue-ca', ca]);
    await worker.waitFor(/worker \S+ on trials-local/);
  });

  afterAll(async () => {
    await worker?.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs trials through rediss:// with a password', (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const jobs = join(dir, 'jobs');
    const run = berth([
      'run',
      '-p',
      sample,
      '-a',
      'oracle',
      '-i',
      'berth__csv*',
      '--jobs-dir',
      jobs,
      '--job-name',
      'tls',
      '--queue',
      url,
      '--queue-ca',
      ca,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(jobs, 'tls', 'berth__csvline-1__1', 'result.json'), 'utf8'));
    expect(result.berth.status).toBe('resolved');
    // config.json records the queue without its password.
    const config = readFileSync(join(jobs, 'tls', 'config.json'), 'utf8');
    expect(config).toContain(`rediss://:***@127.0.0.1:${redis.port}`);
    expect(config).not.toContain(PASSWORD);
  });

  it('refuses a wrong password and an untrusted certificate, exit 2, password never shown', (ctx) => {
    if (unavailable) ctx.skip(true, unavailable);
    const args = ['run', '-p', sample, '-a', 'oracle', '--jobs-dir', join(dir, 'refused')];
    const wrong = berth([
      ...args,
      '--queue',
      `rediss://:wrong-${PASSWORD}@127.0.0.1:${redis.port}`,
      '--queue-ca',
      ca,
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /cannot use the queue at rediss:\/\/:\*\*\*@127\.0\.0\.1:\d+: .*(WRONGPASS|invalid)/,
    );
    expect(wrong.stderr + wrong.stdout).not.toContain(PASSWORD);
    const untrusted = berth([...args, '--queue', url]);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toMatch(/cannot use the queue at rediss:\/\/:\*\*\*@.*certificate/);
    expect(untrusted.stderr + untrusted.stdout).not.toContain(PASSWORD);
  });
});
