/**
 * GPUs and TPUs of a task (Harbor's `[environment] gpus`, `gpu_types`, `[environment.tpu]`) on a
 * Docker engine: used when the engine has them, refused with the reason when it does not, as
 * Harbor's `_validate_gpu_support` / `_validate_tpu_support` refuse a task its environment cannot
 * give (src/harbor/environments/base.py).
 *
 * An engine has GPUs when `docker info` lists the `nvidia` runtime (the NVIDIA Container
 * Toolkit); their models come from `nvidia-smi` on the host. GPUs are requested with the
 * engine's DeviceRequests (`docker run --gpus N`). No Docker engine has TPUs.
 */
import type Docker from 'dockerode';
import { execa } from 'execa';
import type { EnvironmentSpec } from '../../tasks/task.ts';

/** A task asks for an accelerator the environment does not have. Recorded as the trial's error. */
export class UnsupportedEnvironmentError extends Error {
  override name = 'UnsupportedEnvironmentError';
}

/** What accelerators a Docker engine offers. */
export interface EngineAccelerators {
  /** The engine runs containers with GPUs (`nvidia` runtime). */
  gpuRuntime: boolean;
  /** The host's GPU models (`nvidia-smi --query-gpu=name`), one per GPU; empty when unknown. */
  gpuNames: string[];
}

type DockerSpec = Extract<EnvironmentSpec, { kind: 'docker' }>;

const cache = new WeakMap<Docker, Promise<EngineAccelerators>>();

/** The engine's accelerators (asked once per engine connection). */
export function engineAccelerators(docker: Docker): Promise<EngineAccelerators> {
  let found = cache.get(docker);
  if (!found) {
    found = (async () => {
      const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
      const gpuRuntime = Object.keys(info.Runtimes ?? {}).includes('nvidia');
      if (!gpuRuntime) return { gpuRuntime, gpuNames: [] };
      const smi = await execa('nvidia-smi', ['--query-gpu=name', '--format=csv,noheader'], {
        reject: false,
        timeout: 10_000,
      });
      const gpuNames =
        smi.exitCode === 0
          ? String(smi.stdout)
              .split('\n')
              .map((l) => l.trim())
              .filter(Boolean)
          : [];
      return { gpuRuntime, gpuNames };
    })();
    cache.set(docker, found);
  }
  return found;
}

/**
 * Why this engine cannot give the task what it asks for (a Windows container, a TPU, GPUs), or
 * undefined when it can. `berth run` records it as the trial's error and `berth check` says the
 * same reason.
 */
export function engineRefusal(spec: DockerSpec, engine: EngineAccelerators): string | undefined {
  if (spec.os === 'windows') return 'a Windows task (os = "windows") cannot run on this Linux engine';
  if (spec.tpu)
    return `the task asks for a TPU slice (type ${spec.tpu.type}, topology ${spec.tpu.topology}, [environment.tpu]); a Docker engine has no TPUs (Harbor runs such tasks on GKE only)`;
  const gpus = spec.gpus ?? 0;
  if (gpus <= 0) return undefined;
  const asked = `${gpus} GPU(s) ([environment] gpus = ${gpus}${spec.gpuTypes?.length ? `, gpu_types = ${JSON.stringify(spec.gpuTypes)}` : ''})`;
  if (!engine.gpuRuntime)
    return `the task needs ${asked}; this Docker engine has no GPU runtime (docker info lists no nvidia runtime): run it on an engine with the NVIDIA Container Toolkit, or leave it out with -x`;
  const matching = spec.gpuTypes?.length
    ? engine.gpuNames.filter((name) =>
        spec.gpuTypes?.some((type) => name.toLowerCase().includes(type.toLowerCase())),
      )
    : engine.gpuNames;
  if (spec.gpuTypes?.length && matching.length === 0)
    return `the task needs ${asked}; this machine's GPUs are ${engine.gpuNames.length ? engine.gpuNames.join(', ') : 'of unknown models (nvidia-smi did not answer)'}`;
  if (engine.gpuNames.length > 0 && matching.length < gpus)
    return `the task needs ${asked}; this machine has ${matching.length} such GPU(s)`;
  return undefined;
}

/**
 * The engine's device requests for the task's GPUs (`--gpus N`), or none. With `gpu_types`, the
 * GPUs whose model matches are named by index.
 */
export function gpuDeviceRequests(
  spec: DockerSpec,
  engine: EngineAccelerators,
): Array<{ Driver: string; Count?: number; DeviceIDs?: string[]; Capabilities: string[][] }> {
  const gpus = spec.gpus ?? 0;
  if (gpus <= 0 || !engine.gpuRuntime) return [];
  if (spec.gpuTypes?.length && engine.gpuNames.length > 0) {
    const ids = engine.gpuNames
      .map((name, index) => ({ name, index }))
      .filter(({ name }) => spec.gpuTypes?.some((t) => name.toLowerCase().includes(t.toLowerCase())))
      .slice(0, gpus)
      .map(({ index }) => String(index));
    return [{ Driver: 'nvidia', DeviceIDs: ids, Capabilities: [['gpu']] }];
  }
  return [{ Driver: 'nvidia', Count: gpus, Capabilities: [['gpu']] }];
}
