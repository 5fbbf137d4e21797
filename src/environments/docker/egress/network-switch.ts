/**
 * Per-phase network modes (harbor-format §1.3): `[agent]` and `[verifier]` may
 * override the environment's `network_mode` for their phase. Harbor's Docker
 * backend cannot switch a running container; berth does, through the Docker
 * API, by connecting and disconnecting the container's networks:
 *
 * | mode | the container's networks | the proxy admits |
 * | --- | --- | --- |
 * | `public` | its public networks (+ the internal one, if a gateway exists) | everything |
 * | `allowlist` | the trial's internal network only | the listed hosts |
 * | `no-network` | none (loopback only) | (unreachable) |
 *
 * A container whose phases may change mode must be created on an ordinary
 * network (not `--network none`, which Docker cannot connect later); the
 * switch works on created and on running containers. Open connections die
 * with a disconnected interface, and the proxy closes tunnels to hosts a new
 * policy no longer admits.
 */
import type Dockerode from 'dockerode';
import type { NetworkPolicy, Task } from '../../../tasks/task.ts';
import type { Environment } from '../../environment.ts';
import { type EgressGateway, proxyPolicyFor } from './gateway.ts';

/** The phases that may carry their own network mode. */
export type NetworkPhase = 'environment' | 'agent' | 'verifier';

/**
 * The network policy in force during `phase`: the phase's override when the task sets one,
 * else the environment's baseline (Harbor: overrides apply only during that phase).
 */
export function networkForPhase(task: Task, phase: NetworkPhase): NetworkPolicy {
  const baseline =
    task.environment.kind === 'docker' ? task.environment.network : { mode: 'public' as const };
  if (phase === 'environment') return baseline;
  return task.phaseNetwork?.[phase] ?? baseline;
}

/** True when some phase of the task runs under an allowlist (the trial then needs a gateway). */
export function needsEgressGateway(task: Task): boolean {
  return (['environment', 'agent', 'verifier'] as const).some(
    (phase) => networkForPhase(task, phase).mode === 'allowlist',
  );
}

export interface NetworkSwitchOptions {
  /** Networks the container uses in a public phase (its network at creation, usually `bridge`). */
  publicNetworks: string[];
  /** The trial's gateway; required before an allowlist phase. */
  gateway?: EgressGateway;
  /** Networks kept in every mode (the task's own sidecar network, which has no route out). */
  keep?: string[];
}

export class ContainerNetworkSwitch {
  private currentPolicy: NetworkPolicy | undefined;

  constructor(
    private readonly docker: Dockerode,
    private readonly containerId: string,
    private readonly options: NetworkSwitchOptions,
  ) {}

  /** The policy applied last, if any. */
  get current(): NetworkPolicy | undefined {
    return this.currentPolicy;
  }

  /**
   * Puts the container under `policy`. Order matters: networks are removed before a tighter
   * proxy policy is set and added after a looser one, so no moment admits more than either
   * phase allows.
   */
  async apply(policy: NetworkPolicy): Promise<void> {
    const { gateway } = this.options;
    const attached = await this.attachedNetworks();
    const internal = gateway?.internalNetworkName;
    const kept = new Set(this.options.keep ?? []);
    if (policy.mode === 'no-network') {
      for (const name of attached) if (!kept.has(name)) await this.disconnect(name);
    } else if (policy.mode === 'allowlist') {
      if (!gateway) throw new Error('an allowlist phase needs an egress gateway (EgressGateway.start)');
      for (const name of attached) if (name !== internal && !kept.has(name)) await this.disconnect(name);
      await gateway.setPolicy(proxyPolicyFor(policy));
      if (internal && !attached.includes(internal)) await this.connect(internal);
    } else {
      if (gateway) await gateway.setPolicy({ mode: 'public' });
      for (const name of this.options.publicNetworks) if (!attached.includes(name)) await this.connect(name);
      if (internal && !attached.includes(internal)) await this.connect(internal);
    }
    this.currentPolicy = policy;
  }

  /** Names of the networks the container is attached to now. */
  async attachedNetworks(): Promise<string[]> {
    const info = await this.docker.getContainer(this.containerId).inspect();
    const mode = info.HostConfig.NetworkMode;
    if (mode === 'none' || mode === 'host' || mode?.startsWith('container:')) {
      throw new Error(
        `container ${this.containerId.slice(0, 12)} uses network mode \`${mode}\`, which Docker cannot switch; create it on \`bridge\``,
      );
    }
    return Object.keys(info.NetworkSettings.Networks ?? {});
  }

  private async connect(name: string): Promise<void> {
    await this.docker.getNetwork(name).connect({ Container: this.containerId });
  }

  private async disconnect(name: string): Promise<void> {
    await this.docker.getNetwork(name).disconnect({ Container: this.containerId, Force: true });
  }
}

/**
 * Puts a started environment under the network of `phase` (agent or verifier) when the
 * environment can switch (the Docker environment's `setNetworkPolicy`) and the task is a
 * Docker task. Returns the policy applied, or undefined when nothing was switched.
 */
export async function applyPhaseNetwork(
  environment: Environment,
  task: Task,
  phase: Exclude<NetworkPhase, 'environment'>,
): Promise<NetworkPolicy | undefined> {
  if (task.environment.kind !== 'docker' || !environment.setNetworkPolicy) return undefined;
  const policy = networkForPhase(task, phase);
  await environment.setNetworkPolicy(policy);
  return policy;
}
