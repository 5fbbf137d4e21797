import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseApiVersion, compareApiVersions, connectDocker } from './client.ts';

/** A fake engine on a unix socket: answers unversioned /version, refuses versions outside [min, max] like dockerd. */
function fakeEngine(
  min: string,
  max: string,
): Promise<{ socketPath: string; seen: string[]; server: Server; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-fake-engine-'));
  const socketPath = join(dir, 'docker.sock');
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const match = /^\/v(\d+\.\d+)(\/.*)$/.exec(req.url ?? '');
    const path = match ? match[2] : req.url;
    if (match) {
      const v = match[1] as string;
      if (compareApiVersions(v, max) > 0) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            message: `client version ${v} is too new. Maximum supported API version is ${max}`,
          }),
        );
        return;
      }
      if (compareApiVersions(v, min) < 0) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            message: `client version ${v} is too old. Minimum supported API version is ${min}`,
          }),
        );
        return;
      }
    }
    if (path?.startsWith('/version')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ Version: 'fake', ApiVersion: max, MinAPIVersion: min }));
      return;
    }
    if (path?.startsWith('/_ping')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('OK');
      return;
    }
    res.writeHead(404);
    res.end('{}');
  });
  return new Promise((resolve) =>
    server.listen(socketPath, () => resolve({ socketPath, seen, server, dir })),
  );
}

const open: Array<{ server: Server; dir: string }> = [];
afterEach(() => {
  for (const e of open.splice(0)) {
    e.server.close();
    rmSync(e.dir, { recursive: true, force: true });
  }
});

describe('API version negotiation', () => {
  it('compares versions numerically', () => {
    expect(compareApiVersions('1.9', '1.10')).toBeLessThan(0);
    expect(compareApiVersions('1.41', '1.41')).toBe(0);
    expect(compareApiVersions('v1.52', '1.44')).toBeGreaterThan(0);
  });

  it('chooses min(ours, engine max), never below engine min', () => {
    expect(chooseApiVersion({ ApiVersion: '1.41', MinAPIVersion: '1.12' }, '1.47')).toBe('1.41');
    expect(chooseApiVersion({ ApiVersion: '1.52', MinAPIVersion: '1.44' }, '1.47')).toBe('1.47');
    expect(chooseApiVersion({ ApiVersion: '1.52', MinAPIVersion: '1.44' }, '1.41')).toBe('1.44');
    expect(chooseApiVersion({ ApiVersion: '1.10' }, '1.9')).toBe('1.9');
  });

  it('talks to an old engine (max 1.41) at 1.41', async () => {
    const engine = await fakeEngine('1.12', '1.41');
    open.push(engine);
    const { docker, apiVersion } = await connectDocker({ socketPath: engine.socketPath });
    expect(apiVersion).toBe('1.41');
    expect(String(await docker.ping())).toBe('OK');
    expect(engine.seen[0]).toBe('GET /version');
    expect(engine.seen.at(-1)).toBe('GET /v1.41/_ping');
  });

  it('talks to a new engine that refuses old clients (min 1.44) at a version it accepts', async () => {
    const engine = await fakeEngine('1.44', '1.52');
    open.push(engine);
    const { docker, apiVersion } = await connectDocker({
      socketPath: engine.socketPath,
      newestTested: '1.41',
    });
    expect(apiVersion).toBe('1.44');
    expect(String(await docker.ping())).toBe('OK');
    expect(engine.seen.at(-1)).toBe('GET /v1.44/_ping');
  });

  it('the fake engine really refuses out-of-range versions (control)', async () => {
    const engine = await fakeEngine('1.44', '1.52');
    open.push(engine);
    const Docker = (await import('dockerode')).default;
    await expect(new Docker({ socketPath: engine.socketPath, version: 'v1.41' }).ping()).rejects.toThrow(
      /too old/,
    );
  });

  it('reports a missing engine as a prerequisite error', async () => {
    await expect(connectDocker({ socketPath: join(tmpdir(), 'berth-no-such-engine.sock') })).rejects.toThrow(
      /no Docker engine answers/,
    );
  });
});
