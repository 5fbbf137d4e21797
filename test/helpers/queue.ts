/**
 * A real Redis (Debian's redis-server on a free port of 127.0.0.1, no persistence) and real
 * `berth worker` processes for the queue tests. Each worker has its own root folder and runs in
 * its own mount namespace where the submitter's folders are hidden under an empty tmpfs: it
 * cannot read a path that exists only on the submitter's side.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { bin } from './jobs.ts';

/** Why the queue tests cannot run here, or undefined. */
export function queueUnavailable(): string | undefined {
  if (spawnSync('redis-server', ['--version']).status !== 0) return 'redis-server is not installed';
  if (spawnSync('unshare', ['-m', 'true']).status !== 0) return 'unshare -m is not permitted (needs root)';
  return undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts redis-server with `extra` arguments; resolves once it answers. */
export async function startRedis(dir: string, extra: string[] = [], scheme = 'redis'): Promise<TestRedis> {
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const args = extra.includes('--tls-port')
    ? ['--port', '0', ...extra.map((a) => (a === 'PORT' ? String(port) : a))]
    : ['--port', String(port), ...extra];
  const proc = spawn(
    'redis-server',
    [...args, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const deadline = Date.now() + 15_000;
  while (!/Ready to accept connections/.test(out)) {
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`redis-server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    stop: () => stopProcess(proc),
  };
}

async function stopProcess(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill(signal);
  await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
}

export interface TestWorker {
  proc: ChildProcess;
  /** Everything it logged so far. */
  log(): string;
  /** Resolves when its log matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  kill9(): void;
}

/**
 * Starts `berth worker` on `url` with root `root`, in a mount namespace where each folder of
 * `hide` is an empty tmpfs.
 */
export function startTestWorker(
  url: string,
  root: string,
  hide: string[],
  extra: string[] = [],
  env: Record<string, string> = {},
): TestWorker {
  const mounts = hide.map((dir) => `mount -t tmpfs -o size=1m berth-hidden '${dir}'`).join(' && ');
  const command = `${mounts ? `${mounts} && ` : ''}exec node '${bin}' worker --queue '${url}' --root '${root}' --lock-sec 3 ${extra.join(' ')}`;
  const proc = spawn('unshare', ['-m', 'sh', '-c', command], {
    env: { ...process.env, CI: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  proc.stdout?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  return {
    proc,
    log: () => text,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(text)) {
        if (proc.exitCode !== null) throw new Error(`worker exited ${proc.exitCode}:\n${text}`);
        if (Date.now() > deadline) throw new Error(`worker log never matched ${pattern}:\n${text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => stopProcess(proc),
    kill9: () => {
      proc.kill('SIGKILL');
    },
  };
}

/** `berth run ...` without waiting. */
export function startSubmitter(
  args: string[],
  env: Record<string, string> = {},
): {
  proc: ChildProcess;
  output: () => string;
  done: Promise<number | null>;
} {
  const proc = spawn('node', [bin, 'run', ...args], {
    env: { ...process.env, CI: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  proc.stdout?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const done = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, output: () => text, done };
}

/** The worker root of test worker `i` under `dir`. */
export const workerRoot = (dir: string, i: number) => join(dir, `worker-${i}`);
