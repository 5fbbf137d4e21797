/**
 * Cost of the egress allowlist per trial on the real engine: starting the gateway (internal
 * network + proxy container), switching a running container between modes, and removal;
 * against a bare `docker run --rm` of `true` on the same image, measured in the same run.
 * Run: npx tsx bench/egress.ts [rounds]
 */
import { execFileSync } from 'node:child_process';
import Docker from 'dockerode';
import { EgressGateway } from '../src/environments/docker/egress/gateway.ts';
import { ContainerNetworkSwitch } from '../src/environments/docker/egress/network-switch.ts';

const rounds = Number(process.argv[2] ?? 3);
const image = process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
const docker = new Docker();
const labels = { 'dev.berth.managed': '1', 'dev.berth.job': 'bench-egress' };
const seconds = (t0: number) => (performance.now() - t0) / 1000;
const rows: Array<Record<string, number>> = [];
for (let i = 0; i < rounds; i++) {
  let t0 = performance.now();
  execFileSync('docker', ['run', '--rm', '--label', 'dev.berth.job=bench-egress', image, 'true']);
  const bare = seconds(t0);
  t0 = performance.now();
  const gateway = await EgressGateway.start({
    docker,
    labels,
    policy: { mode: 'allowlist', allowedHosts: ['example.org'] },
  });
  const start = seconds(t0);
  const container = await docker.createContainer({
    Image: image,
    Cmd: ['sleep', '600'],
    Labels: labels,
    HostConfig: { NetworkMode: 'bridge' },
  });
  await container.start();
  const net = new ContainerNetworkSwitch(docker, container.id, { publicNetworks: ['bridge'], gateway });
  t0 = performance.now();
  await net.apply({ mode: 'allowlist', allowedHosts: ['example.org'] });
  const toAllowlist = seconds(t0);
  t0 = performance.now();
  await net.apply({ mode: 'public' });
  const toPublic = seconds(t0);
  t0 = performance.now();
  await net.apply({ mode: 'no-network' });
  const toNone = seconds(t0);
  await container.remove({ force: true });
  t0 = performance.now();
  await gateway.stop();
  const stop = seconds(t0);
  rows.push({ bare, start, toAllowlist, toPublic, toNone, stop });
}
const mean = (key: string) => rows.reduce((sum, row) => sum + (row[key] ?? 0), 0) / rows.length;
const bare = mean('bare');
for (const key of ['start', 'toAllowlist', 'toPublic', 'toNone', 'stop']) {
  console.log(
    `${key.padEnd(12)} ${mean(key).toFixed(2)} s  (${(mean(key) / bare).toFixed(2)}x a bare docker run of ${bare.toFixed(2)} s)`,
  );
}
console.log(
  `gateway overhead per trial (start + stop): ${(mean('start') + mean('stop')).toFixed(2)} s over ${rounds} rounds`,
);
