/**
 * The egress gateway of one trial: an internal Docker network (`Internal: true`,
 * so the engine gives it no route out) and an egress proxy container attached
 * to it and to an ordinary network. A task container on the internal network
 * can reach nothing but the proxy, and the proxy admits only the hosts of the
 * allowlist (HTTP CONNECT for HTTPS and other TLS, absolute-URI requests for
 * plain HTTP). This enforces Harbor's `network_mode = "allowlist"`, which
 * Harbor's own Docker backend cannot (harbor-format §1.3).
 *
 * The proxy is a Python 3 program (proxy-source.ts) run from the base image
 * (`berth-base:bookworm` by default), so no image is built or pulled.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type Dockerode from 'dockerode';
import { InputError } from '../../../errors.ts';
import type { NetworkPolicy } from '../../../tasks/task.ts';
import { allowlistPatternError } from './allowlist.ts';
import { containerLogs, execIn } from './docker-io.ts';
import { EGRESS_PROXY_SOURCE } from './proxy-source.ts';

/** Label set on everything the gateway creates, besides the caller's labels. */
export const EGRESS_ROLE_LABEL = 'berth.egress.role';

export interface EgressGatewayOptions {
  docker: Dockerode;
  /** Labels put on the network and the proxy container (the job id label, for `berth clean`). */
  labels: Record<string, string>;
  /** Stem of the names (a trial name); a random suffix is added. */
  name?: string;
  /** Image with python3 for the proxy; default `$BERTH_BASE_IMAGE` or `berth-base:bookworm`. */
  image?: string;
  /**
   * Networks the proxy reaches the outside through; default `['bridge']`. The first is the
   * container's network at creation (a user-defined one gives the proxy Docker's DNS, so
   * it can resolve names of containers on that network).
   */
  upstreamNetworks?: string[];
  /** Initial policy: an allowlist, or `public` (admit everything). */
  policy: ProxyPolicy;
  /** Port the proxy listens on inside the internal network; default 3128. */
  port?: number;
  /** Seconds to wait for the proxy to report ready; default 20. */
  startTimeoutSec?: number;
  /** Host file that receives the proxy's decision log when the gateway stops (e.g. `<trial>/egress.log`). */
  logFile?: string;
}

/** What the proxy admits: the listed hosts, or everything (a public phase). */
export type ProxyPolicy = { mode: 'public' } | { mode: 'allowlist'; allowedHosts: string[] };

/** One decision the proxy logged. */
export interface EgressDecision {
  /** Seconds since the epoch. */
  t: number;
  method: string;
  host: string;
  port: number;
  decision: 'allow' | 'deny' | 'error';
  error?: string;
}

/**
 * Checks every pattern of an allowlist; throws `InputError` naming the first bad one.
 * `origin` names the file and field for the message.
 */
export function validateAllowedHosts(
  hosts: readonly string[],
  origin: { file: string; field: string },
): string[] {
  hosts.forEach((host, index) => {
    const problem = allowlistPatternError(host);
    if (problem)
      throw new InputError(
        { file: origin.file, field: `${origin.field}[${index}]` },
        `\`${host}\`: ${problem}`,
      );
  });
  return hosts.map((host) => host.trim());
}

export class EgressGateway {
  private generation = 0;
  private stopped = false;

  private constructor(
    private readonly docker: Dockerode,
    /** Id of the internal network task containers join in an allowlist phase. */
    readonly internalNetworkId: string,
    readonly internalNetworkName: string,
    readonly proxyContainerId: string,
    /** IPv4 address of the proxy on the internal network. */
    readonly proxyAddress: string,
    /** Port of the proxy. */
    readonly port: number,
    private readonly logFile?: string,
  ) {}

  /**
   * Creates the internal network and starts the proxy; resolves when the proxy listens.
   * Everything created is removed again if a step fails.
   */
  static async start(options: EgressGatewayOptions): Promise<EgressGateway> {
    const { docker } = options;
    const suffix = randomBytes(4).toString('hex');
    const stem = (options.name ?? 'trial').replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 40);
    const port = options.port ?? 3128;
    const image = options.image ?? process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
    const upstream = options.upstreamNetworks?.length ? options.upstreamNetworks : ['bridge'];
    const labels = { ...options.labels, 'berth.egress': suffix };
    let network: Dockerode.Network | undefined;
    let container: Dockerode.Container | undefined;
    try {
      network = await docker.createNetwork({
        Name: `berth-egress-${stem}-${suffix}`,
        Driver: 'bridge',
        Internal: true,
        CheckDuplicate: true,
        Labels: { ...labels, [EGRESS_ROLE_LABEL]: 'internal-network' },
      });
      const networkInfo = await network.inspect();
      container = await docker.createContainer({
        name: `berth-egress-proxy-${stem}-${suffix}`,
        Image: image,
        Cmd: ['python3', '-u', '-c', EGRESS_PROXY_SOURCE],
        Env: [
          `BERTH_EGRESS_PORT=${port}`,
          'BERTH_EGRESS_POLICY_FILE=/run/berth-egress/policy.json',
          `BERTH_EGRESS_POLICY=${JSON.stringify(toProxyJson(options.policy, 0))}`,
        ],
        User: '65534:65534',
        Labels: { ...labels, [EGRESS_ROLE_LABEL]: 'proxy' },
        HostConfig: {
          NetworkMode: upstream[0],
          Memory: 256 * 1024 * 1024,
          PidsLimit: 512,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          ReadonlyRootfs: true,
          Tmpfs: { '/run/berth-egress': 'rw,mode=0755,size=1m', '/tmp': 'rw,size=16m' },
        },
      });
      for (const name of upstream.slice(1))
        await docker.getNetwork(name).connect({ Container: container.id });
      await network.connect({ Container: container.id });
      await container.start();
      const info = await container.inspect();
      const endpoint = info.NetworkSettings.Networks[networkInfo.Name as string];
      const address = endpoint?.IPAddress;
      if (!address) throw new Error(`egress proxy has no address on ${networkInfo.Name}`);
      const gateway = new EgressGateway(
        docker,
        network.id,
        networkInfo.Name as string,
        container.id,
        address,
        port,
        options.logFile,
      );
      await gateway.waitReady(options.startTimeoutSec ?? 20);
      return gateway;
    } catch (error) {
      await container?.remove({ force: true }).catch(() => {});
      await network?.remove().catch(() => {});
      throw error;
    }
  }

  /** `http://<proxy address>:<port>`. */
  get proxyUrl(): string {
    return `http://${this.proxyAddress}:${this.port}`;
  }

  /**
   * Environment variables that send a task container's traffic through the proxy: both cases
   * of the `*_PROXY` variables (curl, pip, npm, Go, git, Python) and `JAVA_TOOL_OPTIONS` with
   * the JVM's proxy properties (Gradle, Maven and other JVM tools ignore `*_PROXY`).
   */
  proxyEnv(): Record<string, string> {
    const url = this.proxyUrl;
    const noProxy = 'localhost,127.0.0.1,::1';
    const jvm = ['http', 'https']
      .map((scheme) => `-D${scheme}.proxyHost=${this.proxyAddress} -D${scheme}.proxyPort=${this.port}`)
      .join(' ');
    return {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
      JAVA_TOOL_OPTIONS: `${jvm} -Dhttp.nonProxyHosts=localhost|127.0.0.1`,
    };
  }

  /**
   * Replaces the proxy's policy and waits until the proxy applied it (open connections to hosts
   * no longer admitted are closed by then).
   */
  async setPolicy(policy: ProxyPolicy, timeoutSec = 10): Promise<void> {
    this.generation += 1;
    const generation = this.generation;
    const json = JSON.stringify(toProxyJson(policy, generation));
    const writer =
      'import os,sys\np="/run/berth-egress/policy.json"\nopen(p+".tmp","w").write(sys.argv[1])\nos.rename(p+".tmp",p)';
    const container = this.docker.getContainer(this.proxyContainerId);
    const result = await execIn(container, ['python3', '-c', writer, json], { user: '0:0' });
    if (result.exitCode !== 0) throw new Error(`cannot set the egress policy: ${result.output.trim()}`);
    const deadline = Date.now() + timeoutSec * 1000;
    while (Date.now() < deadline) {
      const events = parseLog(await containerLogs(container));
      if (events.some((event) => event.event === 'policy' && event.generation === generation)) return;
      await sleep(50);
    }
    throw new Error(`egress proxy did not apply policy generation ${generation} within ${timeoutSec}s`);
  }

  /** Every allow/deny/error decision the proxy logged, in order. */
  async decisions(): Promise<EgressDecision[]> {
    const events = parseLog(await this.log());
    return events.filter((event) => event.event === 'request') as unknown as EgressDecision[];
  }

  /** The proxy's log: one JSON object per line. */
  async log(): Promise<string> {
    return containerLogs(this.docker.getContainer(this.proxyContainerId));
  }

  /**
   * Removes the proxy and the internal network. Containers still attached to the network are
   * disconnected first. Safe to call twice.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.logFile) {
      const text = await this.log().catch(() => undefined);
      if (text !== undefined) await writeFile(this.logFile, text).catch(() => {});
    }
    await this.docker
      .getContainer(this.proxyContainerId)
      .remove({ force: true })
      .catch(() => {});
    const network = this.docker.getNetwork(this.internalNetworkId);
    const info = (await network.inspect().catch(() => undefined)) as
      | { Containers?: Record<string, unknown> }
      | undefined;
    for (const id of Object.keys(info?.Containers ?? {})) {
      await network.disconnect({ Container: id, Force: true }).catch(() => {});
    }
    await network.remove().catch(() => {});
  }

  private async waitReady(timeoutSec: number): Promise<void> {
    const container = this.docker.getContainer(this.proxyContainerId);
    const deadline = Date.now() + timeoutSec * 1000;
    for (;;) {
      const text = await containerLogs(container);
      if (parseLog(text).some((event) => event.event === 'ready')) return;
      const state = (await container.inspect()).State;
      if (!state.Running)
        throw new Error(`egress proxy exited (code ${state.ExitCode}): ${text.slice(-2000)}`);
      if (Date.now() > deadline)
        throw new Error(`egress proxy not ready after ${timeoutSec}s: ${text.slice(-2000)}`);
      await sleep(50);
    }
  }
}

/** Maps a phase's network policy to what the proxy admits during that phase (no-network needs no proxy rule). */
export function proxyPolicyFor(policy: NetworkPolicy): ProxyPolicy {
  return policy.mode === 'allowlist'
    ? { mode: 'allowlist', allowedHosts: policy.allowedHosts }
    : { mode: 'public' };
}

function toProxyJson(policy: ProxyPolicy, generation: number): Record<string, unknown> {
  return policy.mode === 'public'
    ? { mode: 'public', generation }
    : { mode: 'allowlist', allowed_hosts: policy.allowedHosts, generation };
}

function parseLog(text: string): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A line cut by the log driver; ignore it.
    }
  }
  return events;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
