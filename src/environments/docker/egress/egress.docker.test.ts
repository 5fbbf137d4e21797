/**
 * The allowlist, enforced on the real Docker engine: servers on a local Docker network,
 * a task container behind the egress gateway, and phase switches between modes.
 * Skips when no engine answers, unless BERTH_REQUIRE_DOCKER=1.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHarborTask } from '../../../tasks/harbor/loader.ts';
import { shellQuote } from '../../../util/shell.ts';
import { LABELS } from '../labels.ts';
import { DockerEnvironmentProvider } from '../provider.ts';
import { execIn } from './docker-io.ts';
import { EgressGateway } from './gateway.ts';
import { applyPhaseNetwork, ContainerNetworkSwitch } from './network-switch.ts';

const docker = new Docker();
const image = process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
const engine = await docker
  .ping()
  .then(() => docker.getImage(image).inspect())
  .then(() => true)
  .catch(() => false);
const required = process.env.BERTH_REQUIRE_DOCKER === '1';
if (!engine && !required)
  console.warn(`egress tests skipped: no Docker engine or no image ${image} (run .ci/setup-docker.sh)`);

const run = randomBytes(3).toString('hex');
const labels = { 'berth.job': `test-egress-${run}`, 'berth.test': 'egress' };

// A client run inside the task container: prints one JSON line describing what happened.
const CLIENT = String.raw`
import json, os, socket, sys, urllib.request, urllib.error
kind, target = sys.argv[1], sys.argv[2]
try:
    if kind == "get":  # through the proxy variables, as tools do
        with urllib.request.urlopen(target, timeout=5) as r:
            print(json.dumps({"ok": True, "status": r.status, "body": r.read().decode().strip()}))
    elif kind == "connect":  # a CONNECT tunnel, as HTTPS clients use it, then plain HTTP inside
        proxy = os.environ["HTTP_PROXY"].split("//")[1]
        host, port = proxy.split(":")
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = s.recv(4096).decode()
        if " 200 " not in head.split("\r\n")[0]:
            print(json.dumps({"ok": False, "status": int(head.split(" ")[1]), "body": head}))
        else:
            s.sendall(("GET / HTTP/1.0\r\nHost: %s\r\n\r\n" % target).encode())
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            print(json.dumps({"ok": True, "status": 200, "body": data.decode().split("\r\n\r\n", 1)[1].strip()}))
    elif kind == "direct":  # a TCP connection that bypasses the proxy
        host, port = target.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=3)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk: break
            data += chunk
        print(json.dumps({"ok": True, "body": data.decode().split("\r\n\r\n", 1)[-1].strip()}))
except urllib.error.HTTPError as e:
    print(json.dumps({"ok": False, "status": e.code, "egress": e.headers.get("X-Berth-Egress"), "body": e.read().decode().strip()}))
except Exception as e:
    print(json.dumps({"ok": False, "error": type(e).__name__ + ": " + str(e)}))
`;

interface Outcome {
  ok: boolean;
  status?: number;
  body?: string;
  egress?: string;
  error?: string;
}

describe.skipIf(!engine && !required)('egress gateway on the Docker engine', () => {
  const created: Docker.Container[] = [];
  let upstream: Docker.Network;
  let gateway: EgressGateway;
  let task: Docker.Container;
  let net: ContainerNetworkSwitch;
  const ip: Record<string, string> = {};

  async function server(name: string, aliases: string[]): Promise<void> {
    const container = await docker.createContainer({
      name: `berth-test-${name}-${run}`,
      Image: image,
      Labels: labels,
      Cmd: [
        'sh',
        '-c',
        `mkdir -p /tmp/www && echo ${name} > /tmp/www/index.html && cd /tmp/www && exec python3 -m http.server 8000`,
      ],
      HostConfig: { NetworkMode: upstream.id },
      NetworkingConfig: { EndpointsConfig: { [upstreamName]: { Aliases: aliases } } },
    });
    created.push(container);
    await container.start();
    const info = await container.inspect();
    ip[name] = info.NetworkSettings.Networks[upstreamName]?.IPAddress as string;
  }
  const upstreamName = `berth-test-upstream-${run}`;

  async function client(kind: 'get' | 'connect' | 'direct', target: string): Promise<Outcome> {
    const result = await execIn(task, ['python3', '-c', CLIENT, kind, target], { timeoutSec: 30 });
    return JSON.parse(result.output.trim().split('\n').pop() as string) as Outcome;
  }

  beforeAll(async () => {
    upstream = await docker.createNetwork({ Name: upstreamName, Driver: 'bridge', Labels: labels });
    await server('allowed', ['api.allowed.test', 'mirror.wild.test']);
    await server('denied', ['evil.denied.test']);
    gateway = await EgressGateway.start({
      docker,
      labels,
      name: `test-${run}`,
      upstreamNetworks: [upstreamName],
      policy: { mode: 'allowlist', allowedHosts: [] },
    });
    task = await docker.createContainer({
      name: `berth-test-task-${run}`,
      Image: image,
      Labels: labels,
      Cmd: ['sleep', 'infinity'],
      Env: Object.entries(gateway.proxyEnv()).map(([k, v]) => `${k}=${v}`),
      HostConfig: { NetworkMode: upstreamName },
    });
    created.push(task);
    net = new ContainerNetworkSwitch(docker, task.id, { publicNetworks: [upstreamName], gateway });
    // The environment's baseline is applied before the container starts.
    await net.apply({ mode: 'allowlist', allowedHosts: ['api.allowed.test', '*.wild.test'] });
    await task.start();
    // http.server needs a moment to listen.
    for (let i = 0; i < 50; i++) {
      if ((await client('get', 'http://api.allowed.test:8000/')).ok) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 120_000);

  afterAll(async () => {
    for (const container of created) await container.remove({ force: true }).catch(() => {});
    await gateway?.stop();
    await upstream?.remove().catch(() => {});
  });

  it('a listed host answers through the proxy (plain HTTP and a CONNECT tunnel, exact and *.suffix)', async () => {
    expect(await client('get', 'http://api.allowed.test:8000/')).toMatchObject({
      ok: true,
      status: 200,
      body: 'allowed',
    });
    expect(await client('get', 'http://mirror.wild.test:8000/')).toMatchObject({ ok: true, body: 'allowed' });
    expect(await client('connect', 'api.allowed.test:8000')).toMatchObject({ ok: true, body: 'allowed' });
  });

  it('an unlisted host is refused with 403, by name and by IP literal', async () => {
    expect(await client('get', 'http://evil.denied.test:8000/')).toMatchObject({
      ok: false,
      status: 403,
      egress: 'denied',
    });
    expect(await client('connect', 'evil.denied.test:8000')).toMatchObject({ ok: false, status: 403 });
    expect(await client('get', `http://${ip.allowed}:8000/`)).toMatchObject({ ok: false, status: 403 });
    expect(await client('get', 'http://wild.test:8000/')).toMatchObject({ ok: false, status: 403 });
  });

  it('a direct connection that bypasses the proxy fails, even to a listed server', async () => {
    const denied = await client('direct', `${ip.denied}:8000`);
    const allowed = await client('direct', `${ip.allowed}:8000`);
    const byName = await client('direct', 'api.allowed.test:8000');
    for (const outcome of [denied, allowed, byName]) expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
    expect(await net.attachedNetworks()).toEqual([gateway.internalNetworkName]);
  });

  it('the proxy logs every decision', async () => {
    const decisions = await gateway.decisions();
    expect(decisions.some((d) => d.host === 'evil.denied.test' && d.decision === 'deny')).toBe(true);
    expect(
      decisions.some(
        (d) => d.host === 'api.allowed.test' && d.method === 'CONNECT' && d.decision === 'allow',
      ),
    ).toBe(true);
  });

  it('switches the running container: allowlist -> public -> no-network -> allowlist', async () => {
    await net.apply({ mode: 'public' });
    expect(await client('direct', `${ip.denied}:8000`)).toMatchObject({ ok: true, body: 'denied' });
    expect(await client('get', 'http://evil.denied.test:8000/')).toMatchObject({ ok: true, body: 'denied' });

    await net.apply({ mode: 'no-network' });
    expect(await net.attachedNetworks()).toEqual([]);
    expect((await client('direct', `${ip.denied}:8000`)).ok).toBe(false);
    expect((await client('get', 'http://api.allowed.test:8000/')).ok).toBe(false);

    await net.apply({ mode: 'allowlist', allowedHosts: ['evil.denied.test'] });
    expect(await client('get', 'http://evil.denied.test:8000/')).toMatchObject({ ok: true, body: 'denied' });
    expect(await client('get', 'http://api.allowed.test:8000/')).toMatchObject({ ok: false, status: 403 });
    expect((await client('direct', `${ip.denied}:8000`)).ok).toBe(false);
  });
});

describe.skipIf(!engine && !required)(
  'per-phase network modes of a Harbor task in the Docker environment',
  () => {
    const created: Docker.Container[] = [];
    const ip: Record<string, string> = {};
    let scratch: string;

    beforeAll(async () => {
      for (const name of ['mirror', 'other']) {
        const container = await docker.createContainer({
          name: `berth-test-phase-${name}-${run}`,
          Image: image,
          Labels: labels,
          Cmd: [
            'sh',
            '-c',
            `mkdir -p /tmp/www && echo ${name} > /tmp/www/index.html && cd /tmp/www && exec python3 -m http.server 8000`,
          ],
          HostConfig: { NetworkMode: 'bridge' },
        });
        created.push(container);
        await container.start();
        ip[name] = (await container.inspect()).NetworkSettings.Networks.bridge?.IPAddress as string;
      }
      scratch = mkdtempSync(join(tmpdir(), 'berth-egress-task-'));
    }, 60_000);

    afterAll(async () => {
      for (const container of created) await container.remove({ force: true }).catch(() => {});
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    it('environment public -> [agent] allowlist -> [verifier] no-network, then everything removed', async () => {
      const taskDir = join(scratch, 'phase-task');
      mkdirSync(join(taskDir, 'environment'), { recursive: true });
      mkdirSync(join(taskDir, 'tests'), { recursive: true });
      writeFileSync(join(taskDir, 'instruction.md'), 'Fetch the mirror.\n');
      writeFileSync(join(taskDir, 'environment', 'Dockerfile'), `FROM ${image}\nWORKDIR /app\n`);
      writeFileSync(join(taskDir, 'tests', 'test.sh'), 'echo 1 > /logs/verifier/reward.txt\n');
      writeFileSync(
        join(taskDir, 'task.toml'),
        `version = "1.0"\n[environment]\nnetwork_mode = "public"\n[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${ip.mirror}"]\n[verifier]\nnetwork_mode = "no-network"\n`,
      );
      const task = loadHarborTask(taskDir);
      expect(task.phaseNetwork).toEqual({
        agent: { mode: 'allowlist', allowedHosts: [ip.mirror] },
        verifier: { mode: 'no-network' },
      });
      const jobId = `test-egress-phase-${run}`;
      const environment = await new DockerEnvironmentProvider().start({
        task,
        jobId,
        trialDir: join(scratch, 'trial'),
      });
      const client = async (kind: string, target: string): Promise<Outcome> => {
        const result = await environment.exec(
          `python3 -c ${shellQuote(CLIENT)} ${kind} ${shellQuote(target)}`,
          { timeoutSec: 30 },
        );
        return JSON.parse(result.output.trim().split('\n').pop() as string) as Outcome;
      };
      try {
        // Environment baseline: public.
        expect(await client('direct', `${ip.other}:8000`)).toMatchObject({ ok: true, body: 'other' });
        // Agent phase: allowlist.
        expect(await applyPhaseNetwork(environment, task, 'agent')).toMatchObject({ mode: 'allowlist' });
        expect(await client('get', `http://${ip.mirror}:8000/`)).toMatchObject({ ok: true, body: 'mirror' });
        expect(await client('get', `http://${ip.other}:8000/`)).toMatchObject({ ok: false, status: 403 });
        expect((await client('direct', `${ip.mirror}:8000`)).ok).toBe(false);
        // Verifier phase: no network at all.
        expect(await applyPhaseNetwork(environment, task, 'verifier')).toEqual({ mode: 'no-network' });
        expect((await client('get', `http://${ip.mirror}:8000/`)).ok).toBe(false);
        expect((await client('direct', `${ip.other}:8000`)).ok).toBe(false);
      } finally {
        await environment.stop();
      }
      // The proxy's decisions are kept in the trial folder.
      const log = readFileSync(join(scratch, 'trial', 'egress.log'), 'utf8');
      expect(log).toContain(`"host": "${ip.other}"`);
      expect(log).toContain('"decision": "deny"');
      const leftContainers = await docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.job}=${jobId}`] },
      });
      const leftNetworks = await docker.listNetworks({ filters: { label: [`${LABELS.job}=${jobId}`] } });
      expect([leftContainers.length, leftNetworks.length]).toEqual([0, 0]);
    }, 180_000);
  },
);
