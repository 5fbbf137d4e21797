/**
 * The engine's own `/etc/hosts`, `/etc/resolv.conf` and `/etc/hostname` (breaker9: written by an
 * agent's root past the disk limit, onto the host's disk under `/var/lib/docker/containers/<id>/`)
 * are replaced by berth's read-only binds (src/environments/docker/etc-files.ts) in the trial's
 * container and in its compose services, on the real engine: a write fails with EROFS, the
 * engine's files do not grow, names still resolve, the files say what the engine's would say
 * on the same networks, and a trial whose agent tries it is otherwise unaffected.
 */
import { accessSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { readComposeProject, Sidecars } from '../../src/environments/docker/compose.ts';
import { DockerContainerEnvironment } from '../../src/environments/docker/container.ts';
import { execIn } from '../../src/environments/docker/egress/docker-io.ts';
import { ContainerEtcFiles } from '../../src/environments/docker/etc-files.ts';
import { ImageService } from '../../src/environments/docker/images.ts';
import { ownedLabels } from '../../src/environments/docker/labels.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import {
  BASE_IMAGE,
  FIXTURES,
  fixtureImageMap,
  JOB_ID,
  runPhases,
  ShellAgent,
  skipDocker,
} from './helpers.ts';

const FILES = ['/etc/hosts', '/etc/resolv.conf', '/etc/hostname'];

/** breaker9's attack: 60 MB appended to each file as root, then a forged hosts line. */
const WRITE_ALL = [
  `for f in ${FILES.join(' ')}; do`,
  '  if head -c 60000000 /dev/zero >> "$f" 2>/tmp/etc-err; then echo "$f: written"; else echo "$f: refused: $(cat /tmp/etc-err)"; fi',
  'done',
  "printf '10.66.66.66 deps.example.org\\n' >> /etc/hosts 2>/dev/null && echo 'forged: written' || echo 'forged: refused'",
  'getent hosts deps.example.org || echo "deps.example.org: unresolved"',
].join('\n');

/** The three files' mount lines of the calling process (mount options in field 6). */
const MOUNTS = `grep -E ' /etc/(hosts|resolv.conf|hostname) ' /proc/self/mountinfo | awk '{print $5, $6}'`;

const SHOW = 'cat /etc/hosts; echo ---; cat /etc/resolv.conf; echo ---; cat /etc/hostname';

/** hosts, resolv.conf, hostname as shown by SHOW. */
function split(text: string): { hosts: string; resolv: string; hostname: string } {
  const [hosts = '', resolv = '', hostname = ''] = text.split('---\n');
  return { hosts, resolv, hostname };
}

/** `hosts` with the container's own hostname and addresses made neutral, to compare two containers. */
function neutral(hosts: string, hostname: string, addresses: string[]): string {
  let out = hosts.split(hostname).join('<hostname>');
  for (const a of addresses) out = out.split(`${a}\t`).join('<address>\t');
  return out;
}

async function addresses(container: Docker.Container): Promise<string[]> {
  const info = await container.inspect();
  return Object.values(info.NetworkSettings.Networks ?? {})
    .map((n) => n?.IPAddress ?? '')
    .filter(Boolean);
}

describe.skipIf(skipDocker)("berth's own /etc/hosts, resolv.conf, hostname (real engine)", () => {
  let docker: Docker;
  let rootDir = '';
  const created: Docker.Container[] = [];
  const network = `berth-test-etc-${process.pid}`;

  /** A plain container of the engine (its own files), started on `on` and then changed by `steps`. */
  async function plain(on: string): Promise<Docker.Container> {
    const c = await docker.createContainer({
      Image: BASE_IMAGE,
      Cmd: ['sleep', 'infinity'],
      Labels: ownedLabels(JOB_ID),
      HostConfig: { NetworkMode: on },
    });
    created.push(c);
    await c.start();
    return c;
  }

  beforeAll(async () => {
    ({ docker } = await connectDocker());
    rootDir = ((await docker.info()) as { DockerRootDir?: string }).DockerRootDir ?? '/var/lib/docker';
    await docker.createNetwork({ Name: network, Labels: ownedLabels(JOB_ID), CheckDuplicate: true });
    // A container named by an alias on the network, for the engine's DNS to answer.
    const server = await docker.createContainer({
      Image: BASE_IMAGE,
      Cmd: ['sleep', 'infinity'],
      Labels: ownedLabels(JOB_ID),
      HostConfig: { NetworkMode: network },
      NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: ['svc.etc.test'] } } },
    });
    created.push(server);
    await server.start();
  }, 120_000);

  afterAll(async () => {
    for (const c of created) await c.remove({ force: true }).catch(() => undefined);
    await docker
      ?.getNetwork(network)
      .remove()
      .catch(() => undefined);
  });

  it("writes fail (EROFS), the engine's files on the host do not grow, hostname and names resolve", async (ctx) => {
    try {
      accessSync(join(rootDir, 'containers'));
    } catch {
      ctx.skip(
        `the engine's folder ${rootDir}/containers is not readable here (not root, or a remote engine)`,
      );
    }
    const environment = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'public' },
    });
    try {
      const engineDir = join(rootDir, 'containers', environment.id);
      const sizes = () => FILES.map((f) => statSync(join(engineDir, f.slice('/etc/'.length))).size);
      const before = sizes();

      const mounts = (await environment.exec(MOUNTS)).output.trim().split('\n').sort();
      expect(mounts).toHaveLength(3);
      for (const line of mounts) expect(line.split(' ')[1]?.split(','), line).toContain('ro');

      const r = await environment.exec(WRITE_ALL, { timeoutSec: 60 });
      for (const f of FILES) expect(r.output).toContain(`${f}: refused: `);
      expect(r.output).toContain('Read-only file system');
      expect(r.output).not.toContain('written');
      expect(r.output).toContain('deps.example.org: unresolved');
      // The engine keeps its own files (no process of the container reaches them): unchanged.
      expect(sizes()).toEqual(before);
      for (const size of sizes()) expect(size).toBeLessThan(4096);

      const id = environment.id.slice(0, 12);
      const [ip] = await addresses(docker.getContainer(environment.id));
      const names = await environment.exec('hostname; cat /etc/hostname; getent hosts "$(hostname)"');
      const [hostname, file, resolved = ''] = names.output.trim().split('\n');
      expect([hostname, file, resolved.split(/\s+/)]).toEqual([id, id, [ip, id]]);
    } finally {
      await environment.stop();
    }
  });

  it("the files say what the engine's say, on the default bridge and on a user-defined network (its DNS answers)", async () => {
    const environment = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'public' },
    });
    const ours = docker.getContainer(environment.id);
    const engine = await plain('bridge');
    // What each container answers for a name only a DNS server outside knows (the same, or both none).
    const outside = 'getent hosts deb.debian.org >/dev/null && echo resolved || echo unresolved';
    const read = async (online = true) => {
      const a = split((await environment.exec(SHOW)).output);
      const b = split((await execIn(engine, ['sh', '-c', SHOW])).output);
      return {
        a,
        b,
        hostsA: neutral(a.hosts, a.hostname.trim(), await addresses(ours)),
        hostsB: neutral(b.hosts, b.hostname.trim(), await addresses(engine)),
        outsideA: online ? (await environment.exec(outside)).output.trim() : '',
        outsideB: online ? (await execIn(engine, ['sh', '-c', outside])).output.trim() : '',
      };
    };
    try {
      const bridge = await read();
      expect(bridge.a.resolv).toBe(bridge.b.resolv);
      expect(bridge.hostsA).toBe(bridge.hostsB);
      expect(bridge.outsideA).toBe(bridge.outsideB);

      await environment.connectNetwork(network);
      await docker.getNetwork(network).connect({ Container: engine.id });
      const both = await read();
      expect(both.a.resolv).toBe(both.b.resolv);
      expect(both.a.resolv).toContain('nameserver 127.0.0.11');
      expect(both.hostsA).toBe(both.hostsB);
      expect(both.outsideA).toBe(both.outsideB);
      const svc = await environment.exec('getent hosts svc.etc.test || echo unresolved');
      expect(svc.output).toMatch(/^\d+\.\d+\.\d+\.\d+\s+svc\.etc\.test/);

      // The user-defined network only: the engine keeps the line of the bridge it left; berth
      // writes the addresses the container has.
      await environment.disconnectNetwork('bridge');
      await docker.getNetwork('bridge').disconnect({ Container: engine.id, Force: true });
      const netOnly = await read();
      expect(netOnly.a.resolv).toBe(netOnly.b.resolv);
      const [address] = await addresses(ours);
      const lines = netOnly.a.hosts.trim().split('\n');
      expect(lines).toHaveLength(7);
      expect(lines[6]).toBe(`${address}\t${environment.id.slice(0, 12)}`);
      expect((await environment.exec('getent hosts svc.etc.test || echo unresolved')).output).toContain(
        'svc.etc.test',
      );

      // Off the user-defined network, the engine keeps its DNS server's line (its resolver runs on);
      // berth goes back to the host's name servers, as on the bridge at first.
      await environment.disconnectNetwork(network);
      await docker.getNetwork(network).disconnect({ Container: engine.id, Force: true });
      const none = await read(false);
      expect(none.hostsA).toBe(none.hostsB);
      expect(none.a.resolv).toBe(bridge.b.resolv);

      await environment.connectNetwork('bridge');
      await docker.getNetwork('bridge').connect({ Container: engine.id });
      const again = await read();
      expect(again.hostsA).toBe(again.hostsB);
      expect(again.a.resolv).toBe(bridge.b.resolv);
      expect(again.outsideA).toBe(again.outsideB);
    } finally {
      await environment.stop();
    }
  });

  it('a network policy switch writes the files once, for every network it changed', async () => {
    const environment = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'public' },
    });
    const refresh = vi.spyOn(ContainerEtcFiles.prototype, 'refresh');
    try {
      await environment.connectNetwork(network);
      expect(await addresses(docker.getContainer(environment.id))).toHaveLength(2);
      refresh.mockClear();
      // Two networks left in one switch: one write, with neither address.
      await environment.setNetworkPolicy({ mode: 'no-network' });
      expect(refresh).toHaveBeenCalledTimes(1);
      const none = split((await environment.exec(SHOW)).output);
      expect(none.hosts.trim().split('\n')).toHaveLength(6);
      expect(none.resolv).not.toContain('127.0.0.11');
      refresh.mockClear();
      await environment.setNetworkPolicy({ mode: 'public' });
      expect(refresh).toHaveBeenCalledTimes(1);
      const [address] = await addresses(docker.getContainer(environment.id));
      expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(split((await environment.exec(SHOW)).output).hosts).toContain(
        `${address}\t${environment.id.slice(0, 12)}`,
      );
    } finally {
      refresh.mockRestore();
      await environment.stop();
    }
  });

  it('after killStrayProcesses the container stays stopped until the next command starts it, files written again', async () => {
    const environment = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'public' },
    });
    const ours = docker.getContainer(environment.id);
    try {
      await environment.exec('nohup sleep 300 >/dev/null 2>&1 & echo data > /root/left.txt');
      expect(await environment.killStrayProcesses()).toBeGreaterThan(0);
      // Nothing runs, and the engine's record and the files are read from the stopped container.
      expect((await ours.inspect()).State.Running).toBe(false);
      expect(await environment.processList()).toEqual([]);
      expect((await environment.fileSystemChanges()).map((c) => c.path)).toContain('/root/left.txt');
      const tar = await environment.archive('/root/left.txt');
      tar.resume();
      await new Promise((r) => tar.on('end', r));
      expect((await ours.inspect()).State.Running).toBe(false);
      expect(environment.restarts).toBe(0);
      // The next command starts it: the stray sleep is gone, the files name its address now.
      const after = await environment.exec(
        `for p in /proc/[0-9]*; do cat $p/comm 2>/dev/null; done | grep -c '^sleep$'; ${SHOW}`,
      );
      expect(environment.restarts).toBe(1);
      expect(after.output.split('\n')[0]).toBe('1'); // the keep-alive loop's own sleep
      const [address] = await addresses(ours);
      expect(split(after.output.slice(after.output.indexOf('\n') + 1)).hosts).toContain(
        `${address}\t${environment.id.slice(0, 12)}`,
      );
    } finally {
      await environment.stop();
    }
  });

  it('a trial whose agent writes into the three files still resolves, and its writes are refused', async () => {
    const agent = new ShellAgent(`sed -i 's/a - b/a + b/' /app/calc.py\n${WRITE_ALL}`);
    const run = await runPhases(loadHarborTask(join(FIXTURES, 'tasks', 'calc')), agent);
    expect(run.verdict.rewards.reward).toBe(1);
    for (const f of FILES) expect(agent.output).toContain(`${f}: refused: `);
    expect(agent.output).not.toContain('written');
  });

  it("a compose service's own three files are read-only too, and its service name resolves", async () => {
    const task = join(import.meta.dirname, '..', 'fixtures', 'task-fields', 'mcp-sidecar');
    const project = readComposeProject(join(task, 'environment', 'docker-compose.yaml'));
    const images = new ImageService(docker, { imageMap: fixtureImageMap(), jobId: JOB_ID });
    const sidecars = await Sidecars.start(
      project,
      {
        docker,
        images,
        jobId: JOB_ID,
        trialName: 'etc-files',
        imageStem: 'berth-test-etc',
        publicNetwork: false,
      },
      () => undefined,
    );
    try {
      const service = docker.getContainer(`${sidecars.network}-secrets`.slice(0, 120));
      const r = await execIn(service, ['sh', '-c', `${WRITE_ALL}\ngetent hosts secrets || echo unresolved`], {
        user: '0',
        timeoutSec: 60,
      });
      for (const f of FILES) expect(r.output).toContain(`${f}: refused: `);
      expect(r.output).not.toContain('written');
      expect(r.output).toMatch(/\d+\.\d+\.\d+\.\d+\s+secrets/);
      expect((await execIn(service, ['cat', '/etc/resolv.conf'])).output).toContain('nameserver 127.0.0.11');
    } finally {
      await sidecars.stop();
    }
  });
});
