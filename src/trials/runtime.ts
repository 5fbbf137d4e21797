/**
 * The live objects a trial runs with (the agent, the environment providers, the verifiers),
 * made from a `TrialSpec`'s data. A job makes them once for all its trials and hands them to
 * the engine; `berth trial SPEC.json` and a worker make them from the spec alone.
 */
import type { Agent } from '../agents/agent.ts';
import { createAgent } from '../agents/registry.ts';
import { ImageMap } from '../environments/docker/dockerfile.ts';
import type { EnvironmentProvider } from '../environments/environment.ts';
import { createProviders } from '../environments/registry.ts';
import type { SwebenchRules } from '../grading/swebench.ts';
import { createVerifiers } from '../verifiers/registry.ts';
import type { Verifier } from '../verifiers/verifier.ts';
import type { TrialSpec } from './spec.ts';

export interface TrialRuntime {
  agent: Agent;
  /** One provider per environment kind. */
  providers: readonly EnvironmentProvider[];
  /** One verifier per verifier kind. */
  verifiers: readonly Verifier[];
}

/** The environment providers a spec asks for (its environment options, limits and build timeout multiplier). */
export function providersFor(
  spec: Pick<TrialSpec, 'environment' | 'limits' | 'timeouts'> & {
    /** Trials this host runs at once (the providers size per-environment limits by it); default 1. */
    concurrency?: number;
  },
): EnvironmentProvider[] {
  const e = spec.environment;
  return createProviders({
    ...(e.reposDir !== undefined ? { reposDir: e.reposDir } : {}),
    ...(e.tmpRoot !== undefined ? { tmpRoot: e.tmpRoot } : {}),
    ...(e.isolation !== undefined ? { isolation: e.isolation } : {}),
    ...(e.keep ? { keep: true } : {}),
    imageMap: new ImageMap(e.imageMap ?? {}),
    ...(e.rebuild ? { rebuild: true } : {}),
    ...(e.egressImage !== undefined ? { egressImage: e.egressImage } : {}),
    ...(e.imagesDir !== undefined ? { imagesDir: e.imagesDir } : {}),
    ...(spec.limits.processes !== undefined ? { pidsLimit: spec.limits.processes } : {}),
    limits: spec.limits,
    concurrency: spec.concurrency ?? 1,
    buildTimeoutMultiplier: spec.timeouts.environmentBuildMultiplier ?? spec.timeouts.multiplier,
  });
}

/** The runtime of a spec: its agent by registry name and options, its providers, every verifier. */
export async function runtimeFor(spec: TrialSpec): Promise<TrialRuntime> {
  return {
    agent: await createAgent(spec.agent.name, spec.agent.options),
    providers: providersFor(spec),
    verifiers: createVerifiers(
      spec.verification.rules === 'swebench' ? { rules: spec.verification.rules as SwebenchRules } : {},
    ),
  };
}
