/**
 * The `docker` environment provider: builds or finds the task's image, starts
 * one container per trial, and labels it with the job id. Harbor's `/logs/agent`,
 * `/logs/verifier` and `/logs/artifacts` are folders of the container, copied out as
 * data after each phase: no host folder is ever mounted where untrusted code writes.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { InputError } from '../../errors.ts';
import { type LimitRequest, resolveLimits, taskResources } from '../../sandbox/limits.ts';
import type { EnvironmentSpec, Task } from '../../tasks/task.ts';
import type {
  EnvironmentProvider,
  EnvironmentStartContext,
  ToolInstall,
  ToolInstallRecord,
} from '../environment.ts';
import { failedInstall } from '../tool-install.ts';
import {
  engineAccelerators,
  engineRefusal,
  gpuDeviceRequests,
  UnsupportedEnvironmentError,
} from './accelerators.ts';
import { connectDocker } from './client.ts';
import { readComposeProject, Sidecars } from './compose.ts';
import { DockerContainerEnvironment } from './container.ts';
import { type BaseImage, ImageMap, orderBases, readBasesManifest } from './dockerfile.ts';
import { EgressGateway, proxyPolicyFor } from './egress/gateway.ts';
import { needsEgressGateway, networkForPhase } from './egress/network-switch.ts';
import { archiveCandidates, findArchive } from './image-archives.ts';
import { ImageService } from './images.ts';
import { LABELS, ownedLabels } from './labels.ts';

/** Where a container sees the model gateway's folder. */
export const MODEL_GATEWAY_MOUNT = '/run/berth-gateway';

import { ownedTempDir } from '../../util/leftovers.ts';
import { cleanDocker } from './clean.ts';
import { ensureToolLayer } from './tool-layer.ts';

export type DockerSpec = Extract<EnvironmentSpec, { kind: 'docker' }> & {
  /** A Dockerfile's text, built with an empty context (SWE-bench rows that carry one). */
  dockerfile?: string;
  /** Dataset `bases/` folder (Kotlin Benchmark layout). */
  basesDir?: string;
  /** Local image name stem for built images (`hb__<task>`). */
  imageName?: string;
};

export interface DockerProviderOptions {
  imageMap?: ImageMap;
  /** Rebuild images even when cached. */
  rebuild?: boolean;
  /** Pids limit of every container (default 4096, within the host's budget for `concurrency`). */
  pidsLimit?: number;
  /** Limits from the command line (`--override-cpus`, `--override-memory-mb`, `--override-storage-mb`). */
  limits?: LimitRequest;
  /** Trials run at once (`-n`): the pids limit keeps them all within half of the host's pids. */
  concurrency?: number;
  /** Multiplies `build_timeout_sec` (Harbor's `--environment-build-timeout-multiplier`). */
  buildTimeoutMultiplier?: number;
  /** Image (with python3) of the egress proxy for allowlist phases; default the base image. */
  egressImage?: string;
  /** Where tasks' image archives (`tar_path`) are looked for first (`--images-dir`; default `<dataset>/sample_images`). */
  imagesDir?: string;
}

/** What a task's image comes from, in Harbor's order of preference. */
export type ImagePlan =
  | { kind: 'build'; contextDir: string; dockerfile: string; tags: string[] }
  | { kind: 'inline'; text: string }
  | { kind: 'image'; image: string };

/** Decides how to get a task's image: compose `main`, `environment/Dockerfile`, or `docker_image`. */
export function planImage(spec: DockerSpec, origin = 'task'): ImagePlan {
  if (spec.composeFile) {
    const { main } = readComposeProject(spec.composeFile);
    const tags = main.image ? [main.image] : [];
    if (main.build)
      return { kind: 'build', contextDir: main.build.context, dockerfile: main.build.dockerfile, tags };
    if (spec.dockerfileDir)
      return { kind: 'build', contextDir: spec.dockerfileDir, dockerfile: 'Dockerfile', tags };
    if (main.image) return { kind: 'image', image: main.image };
  }
  if (spec.dockerfileDir)
    return { kind: 'build', contextDir: spec.dockerfileDir, dockerfile: 'Dockerfile', tags: [] };
  if (typeof spec.dockerfile === 'string') return { kind: 'inline', text: spec.dockerfile };
  if (spec.image) return { kind: 'image', image: spec.image };
  throw new InputError(
    { file: origin },
    'the environment has no Dockerfile, no docker-compose.yaml `main` service and no docker_image',
  );
}

function basesOf(spec: DockerSpec): BaseImage[] | undefined {
  if (!spec.basesDir || !existsSync(join(spec.basesDir, 'manifest'))) return undefined;
  return orderBases(readBasesManifest(spec.basesDir));
}

export class DockerEnvironmentProvider implements EnvironmentProvider {
  readonly kind = 'docker' as const;
  private images?: Promise<ImageService>;
  /** Image per task folder, prepared once per provider (one job): later trials skip hashing. */
  private prepared = new Map<string, Promise<string>>();
  /** Agent layer per (task image, tool), installed once per provider; later trials wait for it. */
  private tools = new Map<string, Promise<{ image: string; record: ToolInstallRecord }>>();

  constructor(private readonly options: DockerProviderOptions = {}) {}

  /** Capability "reclaim": removes containers and networks of berth processes that are gone (src/environments/docker/clean.ts). */
  async reclaim(): Promise<number> {
    const { docker } = await connectDocker();
    const removed = await cleanDocker(docker, { unowned: false });
    return removed.containers + removed.networks;
  }

  private imageService(jobId: string): Promise<ImageService> {
    this.images ??= connectDocker().then(
      ({ docker }) =>
        new ImageService(docker, { imageMap: this.options.imageMap, rebuild: this.options.rebuild, jobId }),
    );
    return this.images;
  }

  /** Builds (or finds) the task's image; returns the image to run. */
  async prepareImage(
    task: Task,
    context: { jobId: string; signal?: AbortSignal; onLog?: (line: string) => void },
  ): Promise<string> {
    const spec = task.environment as DockerSpec;
    if (spec.kind !== 'docker')
      throw new Error(`the docker provider cannot start a ${spec.kind} environment`);
    const images = await this.imageService(context.jobId);
    const plan = planImage(spec, task.origin.file);
    const bases = basesOf(spec);
    const timeoutSec =
      spec.buildTimeoutSec !== undefined
        ? spec.buildTimeoutSec * (this.options.buildTimeoutMultiplier ?? 1)
        : undefined;
    const archive = spec.imageArchive
      ? {
          tarPath: spec.imageArchive.tarPath,
          file: findArchive(spec.imageArchive, this.options.imagesDir),
          candidates: archiveCandidates(spec.imageArchive, this.options.imagesDir),
        }
      : undefined;
    if (plan.kind === 'image')
      return images.provide(plan.image, {
        bases,
        onLog: context.onLog,
        signal: context.signal,
        timeoutSec,
        ...(archive ? { archive } : {}),
      });
    if (plan.kind === 'inline') {
      const dir = await ownedTempDir('berth-inline-');
      try {
        await writeFile(join(dir, 'Dockerfile'), plan.text);
        return await images.build({
          contextDir: dir,
          name: spec.imageName ?? task.name,
          timeoutSec,
          bases,
          onLog: context.onLog,
          signal: context.signal,
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    return images.build({
      contextDir: plan.contextDir,
      dockerfile: plan.dockerfile,
      name: spec.imageName ?? task.name,
      tags: plan.tags,
      timeoutSec,
      bases,
      onLog: context.onLog,
      signal: context.signal,
      ...(archive ? { archive } : {}),
    });
  }

  /**
   * The image with `tool` installed over `image` (its cached layer, or built now). Trials of
   * one job share one install: only the first records `installed: true`.
   */
  private async installTool(
    image: string,
    tool: ToolInstall,
    context: { jobId: string; onLog: (line: string) => void; signal?: AbortSignal },
  ): Promise<{ image: string; record: ToolInstallRecord }> {
    const key = `${image}\0${tool.name}\0${tool.version}`;
    const started = performance.now();
    const pending = this.tools.get(key);
    if (pending) {
      const { image: layered, record } = await pending;
      const durationSec = Math.round(performance.now() - started) / 1000;
      return { image: layered, record: { ...record, installed: false, durationSec, log: [] } };
    }
    const { docker } = await connectDocker();
    const images = await this.imageService(context.jobId);
    const p = ensureToolLayer(docker, images, image, tool, context);
    this.tools.set(key, p);
    p.catch(() => this.tools.delete(key));
    return p;
  }

  async start(context: EnvironmentStartContext): Promise<DockerContainerEnvironment> {
    const { task, trialDir, jobId } = context;
    const spec = task.environment as DockerSpec;
    mkdirSync(trialDir, { recursive: true });
    // GPUs / TPUs: refused before anything is built when this engine has none.
    const accelerators = await engineAccelerators((await connectDocker()).docker);
    const refusal = engineRefusal(spec, accelerators);
    if (refusal) throw new UnsupportedEnvironmentError(refusal);
    const buildLog = join(trialDir, 'build.log');
    const key = `${task.origin.file}\0${task.name}`;
    let prepared = this.prepared.get(key);
    if (!prepared) {
      prepared = this.prepareImage(task, {
        jobId,
        signal: context.signal,
        onLog: (line) => appendFileSync(buildLog, `${line}\n`),
      });
      this.prepared.set(key, prepared);
      prepared.catch(() => this.prepared.delete(key));
    }
    let image = await prepared;
    const taskImage = image;
    let toolInstall: ToolInstallRecord | undefined;
    if (context.tool) {
      const log: string[] = [];
      try {
        ({ image, record: toolInstall } = await this.installTool(image, context.tool, {
          jobId,
          onLog: (line) => {
            log.push(line);
            appendFileSync(buildLog, `${line}\n`);
          },
          ...(context.signal ? { signal: context.signal } : {}),
        }));
      } catch (error) {
        if (context.signal?.aborted) throw error;
        // The agent's set-up reports it, with the log; the task's image starts as it is.
        toolInstall = failedInstall(context.tool, error, log);
      }
    }
    // No host folder is mounted where untrusted code writes: only the model gateway's socket folder, read-only.
    // docker-compose sidecars (a `main` service plus others): started before the main container.
    const sidecars = await this.startSidecars(task, spec, context, buildLog);
    const mounts: { host: string; container: string; readOnly: boolean }[] = [];
    if (context.modelGatewayDir)
      mounts.push({ host: context.modelGatewayDir, container: MODEL_GATEWAY_MOUNT, readOnly: true });
    const { docker } = await connectDocker();
    // An allowlist in any phase: the trial gets an internal network and an egress proxy.
    const egress = needsEgressGateway(task)
      ? await EgressGateway.start({
          docker,
          labels: { ...ownedLabels(jobId), [LABELS.trial]: basename(trialDir) },
          name: basename(trialDir),
          logFile: join(trialDir, 'egress.log'),
          policy: proxyPolicyFor(networkForPhase(task, 'environment')),
          ...(this.options.egressImage ? { image: this.options.egressImage } : {}),
        })
      : undefined;
    try {
      const environment = await DockerContainerEnvironment.create({
        docker,
        ...(egress ? { egress } : {}),
        // [environment] env in every command; the egress proxy's variables over it.
        env: { ...(context.env ?? {}), ...(egress?.proxyEnv() ?? {}) },
        deviceRequests: gpuDeviceRequests(spec, accelerators),
        ...(sidecars ? { sidecars } : {}),
        image,
        jobId,
        trialName: basename(trialDir),
        taskName: task.name,
        ...(spec.dockerfileDir || spec.composeFile
          ? { imageFile: spec.composeFile ?? join(spec.dockerfileDir as string, 'Dockerfile') }
          : {}),
        workdir: spec.workdir,
        limits: resolveLimits(
          taskResources(spec),
          {
            ...(this.options.pidsLimit !== undefined ? { processes: this.options.pidsLimit } : {}),
            ...this.options.limits,
          },
          this.options.concurrency,
        ),
        network: spec.network,
        ...(mounts.length > 0 ? { mounts } : {}),
      });
      environment.image = taskImage;
      if (toolInstall) environment.toolInstall = toolInstall;
      if (context.modelGatewayDir) environment.modelGatewayDir = MODEL_GATEWAY_MOUNT;
      return environment;
    } catch (error) {
      await egress?.stop();
      await sidecars?.stop();
      throw error;
    }
  }

  /**
   * The task's compose services other than `main`, started on the trial's private network
   * (compose.ts); undefined when the task has none. Their output goes to `<trial>/services/`.
   */
  private async startSidecars(
    task: Task,
    spec: DockerSpec,
    context: EnvironmentStartContext,
    buildLog: string,
  ): Promise<Sidecars | undefined> {
    if (!spec.composeFile) return undefined;
    const project = readComposeProject(spec.composeFile, context.env ?? {});
    if (project.sidecars.length === 0) return undefined;
    const { docker } = await connectDocker();
    const servicesDir = join(context.trialDir, 'services');
    const bases = basesOf(spec);
    for (const warning of project.warnings) appendFileSync(buildLog, `${task.name}: ${warning}\n`);
    return Sidecars.start(
      project,
      {
        docker,
        images: await this.imageService(context.jobId),
        jobId: context.jobId,
        trialName: basename(context.trialDir),
        imageStem: spec.imageName ?? task.name,
        publicNetwork: spec.network.mode === 'public',
        ...(bases ? { bases } : {}),
        ...(spec.buildTimeoutSec !== undefined
          ? { buildTimeoutSec: spec.buildTimeoutSec * (this.options.buildTimeoutMultiplier ?? 1) }
          : {}),
        onLog: (line) => appendFileSync(buildLog, `${line}\n`),
        ...(context.signal ? { signal: context.signal } : {}),
      },
      (service, text) => {
        mkdirSync(servicesDir, { recursive: true });
        writeFileSync(join(servicesDir, `${service.replace(/[^A-Za-z0-9._-]/g, '_')}.log`), text);
      },
    );
  }
}

/**
 * Reads the Docker options out of the generic provider options of
 * `createProviders` (`imageMap`, `rebuild`, `pidsLimit`, `limits`, `concurrency`, `buildTimeoutMultiplier`).
 */
export function dockerProviderOptions(options: Record<string, unknown>): DockerProviderOptions {
  return {
    ...(options.imageMap instanceof ImageMap ? { imageMap: options.imageMap } : {}),
    ...(typeof options.rebuild === 'boolean' ? { rebuild: options.rebuild } : {}),
    ...(typeof options.pidsLimit === 'number' ? { pidsLimit: options.pidsLimit } : {}),
    ...(options.limits && typeof options.limits === 'object'
      ? { limits: options.limits as LimitRequest }
      : {}),
    ...(typeof options.concurrency === 'number' ? { concurrency: options.concurrency } : {}),
    ...(typeof options.buildTimeoutMultiplier === 'number'
      ? { buildTimeoutMultiplier: options.buildTimeoutMultiplier }
      : {}),
    ...(typeof options.egressImage === 'string' ? { egressImage: options.egressImage } : {}),
    ...(typeof options.imagesDir === 'string' ? { imagesDir: options.imagesDir } : {}),
  };
}
