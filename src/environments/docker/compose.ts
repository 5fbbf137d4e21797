/**
 * A task's `environment/docker-compose.yaml` (Harbor's multi-container tasks, e.g. its
 * `hello-mcp` example): the `main` service is the trial's container, every other service is a
 * sidecar started beside it on a private network of the trial and removed with it, through the
 * Docker API (no docker-compose binary).
 *
 * What is read (the keys Harbor's compose files use; the others are warned about and ignored):
 * - every service: `image`, `build` (a folder, or `{context, dockerfile}`), `command`,
 *   `entrypoint`, `environment` (list or map), `working_dir`, `user`, `healthcheck` (`test`,
 *   `interval`, `timeout`, `retries`, `start_period`, `disable`), `depends_on` (a list, or a map
 *   with `condition`: `service_started`, `service_healthy`, `service_completed_successfully`);
 *   `expose` needs nothing (every service reaches the others' ports on the private network);
 * - `main`: `build` / `image` pick its image (provider.ts `planImage`), `depends_on` what it
 *   waits for, `environment` its variables under `[environment] env`.
 *
 * Network: each trial gets its own network (`Internal`: no route out of the machine, and no
 * address of the host on it, so the host's own services are out of reach too), every
 * service joins it under its service name, and the trial's container joins it as `main` and
 * keeps it whatever its `network_mode` (the sidecars are part of the task, not the internet).
 * When the task's network is `public`, the sidecars also get the default bridge. Variables
 * `${VAR}` / `${VAR:-default}` in the file are read from `[environment] env`, as compose reads
 * them from the environment Harbor passes it.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Docker from 'dockerode';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { describeIssue, InputError } from '../../errors.ts';
import type { BaseImage } from './dockerfile.ts';
import { demuxDockerStream } from './egress/docker-io.ts';
import { ContainerEtcFiles } from './etc-files.ts';
import type { ImageService } from './images.ts';
import { LABELS, ownedLabels } from './labels.ts';
import { pauseContainer, startContainer } from './lifecycle.ts';

/** The bridge option that gives the host no address on a network. */
export const NO_HOST_ADDRESS = 'com.docker.network.bridge.inhibit_ipv4';

/** Harbor's `healthcheck` of a compose service, in seconds. */
export interface ServiceHealthcheck {
  /** `CMD` / `CMD-SHELL` argv as Docker takes it. */
  test: string[];
  intervalSec: number;
  timeoutSec: number;
  retries: number;
  startPeriodSec: number;
}

export type DependsCondition = 'service_started' | 'service_healthy' | 'service_completed_successfully';

/** One service of the compose file, normalised. */
export interface ComposeService {
  name: string;
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment: Record<string, string>;
  workingDir?: string;
  user?: string;
  healthcheck?: ServiceHealthcheck;
  dependsOn: Array<{ service: string; condition: DependsCondition }>;
}

/** The compose file: its services (main first), and warnings about what is ignored. */
export interface ComposeProject {
  file: string;
  main: ComposeService;
  sidecars: ComposeService[];
  warnings: string[];
}

const stringList = z.union([z.string(), z.array(z.union([z.string(), z.number()]))]);
const serviceSchema = z.looseObject({
  image: z.string().optional(),
  build: z
    .union([z.string(), z.looseObject({ context: z.string().optional(), dockerfile: z.string().optional() })])
    .optional(),
  command: stringList.optional(),
  entrypoint: stringList.optional(),
  environment: z
    .union([
      z.array(z.string()),
      z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
    ])
    .optional(),
  working_dir: z.string().optional(),
  user: z.union([z.string(), z.number()]).optional(),
  healthcheck: z
    .looseObject({
      test: stringList.optional(),
      interval: z.string().optional(),
      timeout: z.string().optional(),
      retries: z.number().int().nonnegative().optional(),
      start_period: z.string().optional(),
      start_interval: z.string().optional(),
      disable: z.boolean().optional(),
    })
    .optional(),
  depends_on: z
    .union([
      z.array(z.string()),
      z.record(
        z.string(),
        z.looseObject({
          condition: z
            .enum(['service_started', 'service_healthy', 'service_completed_successfully'])
            .optional(),
        }),
      ),
    ])
    .optional(),
  expose: z.array(z.union([z.string(), z.number()])).optional(),
});
const composeSchema = z.looseObject({
  services: z.record(z.string(), serviceSchema.nullable()),
});

/** Keys of a service this reader uses; the others are warned about. */
const SERVICE_KEYS = new Set([
  'image',
  'build',
  'command',
  'entrypoint',
  'environment',
  'working_dir',
  'user',
  'healthcheck',
  'depends_on',
  'expose',
]);

/** `1m30s`, `2s`, `500ms`, `1h` (compose durations) in seconds. */
export function durationSec(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const re = /(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/g;
  let total = 0;
  let matched = '';
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : m[2] === 'ms' ? n / 1e3 : 0;
    matched += m[0];
  }
  if (matched !== text.replace(/\s+/g, '')) throw new Error(`not a duration: ${JSON.stringify(text)}`);
  return total;
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** Compose's `${VAR}`, `${VAR:-default}`, `$VAR` (and `$$` for a dollar) from `vars`. */
export function interpolate(text: string, vars: Readonly<Record<string, string>>): string {
  return text
    .split('$$')
    .map((part) => part.replace(VARIABLE, (_m, a, fallback, b) => vars[a ?? b] || (fallback ?? '')))
    .join('$');
}

function argv(value: string | Array<string | number> | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? ['/bin/sh', '-c', value] : value.map(String);
}

/**
 * Reads a task's compose file.
 * @param vars variables for `${VAR}` in the file (`[environment] env`)
 * @throws InputError naming the file, the line and the key when it does not parse, has no `main`
 *   service, or a value is of the wrong type
 */
export function readComposeProject(
  file: string,
  vars: Readonly<Record<string, string>> = {},
): ComposeProject {
  const text = interpolate(readFileSync(file, 'utf8'), vars);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    throw new InputError({ file, line: e?.linePos?.[0]?.line }, `invalid YAML: ${e?.message.split('\n')[0]}`);
  }
  const lineOf = (path: ReadonlyArray<PropertyKey>): number | undefined => {
    let node: unknown = doc.contents;
    for (const key of path) {
      if (isMap(node)) node = node.get(key as string, true);
      else if (isSeq(node)) node = node.get(key as number, true);
      else return undefined;
    }
    const range = (node as { range?: [number] } | undefined)?.range;
    return range ? lines.linePos(range[0]).line : undefined;
  };
  const parsed = composeSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.');
    throw new InputError(
      { file, line: lineOf((issue?.path ?? []) as PropertyKey[]), ...(field ? { field } : {}) },
      issue?.message ?? 'not a compose file',
    );
  }
  const warnings: string[] = [];
  const dir = dirname(file);
  const services: ComposeService[] = [];
  for (const [name, raw] of Object.entries(parsed.data.services)) {
    const s = raw ?? {};
    for (const key of Object.keys(s))
      if (!SERVICE_KEYS.has(key))
        warnings.push(
          describeIssue({
            file,
            line: lineOf(['services', name, key]),
            field: `services.${name}.${key}`,
            message: 'not used by berth',
          }),
        );
    const at = (key: string) => ({
      file,
      line: lineOf(['services', name, key]),
      field: `services.${name}.${key}`,
    });
    let build: ComposeService['build'];
    if (typeof s.build === 'string') build = { context: resolve(dir, s.build), dockerfile: 'Dockerfile' };
    else if (s.build)
      build = {
        context: resolve(dir, s.build.context ?? '.'),
        dockerfile: s.build.dockerfile ?? 'Dockerfile',
      };
    const environment: Record<string, string> = {};
    if (Array.isArray(s.environment)) {
      for (const item of s.environment) {
        const eq = item.indexOf('=');
        if (eq > 0) environment[item.slice(0, eq)] = item.slice(eq + 1);
      }
    } else
      for (const [k, v] of Object.entries(s.environment ?? {})) environment[k] = v === null ? '' : String(v);
    let healthcheck: ServiceHealthcheck | undefined;
    const h = s.healthcheck;
    if (h && !h.disable && h.test !== undefined) {
      const test = typeof h.test === 'string' ? ['CMD-SHELL', h.test] : h.test.map(String);
      if (test[0] !== 'NONE') {
        try {
          healthcheck = {
            test,
            intervalSec: durationSec(h.interval, 30),
            timeoutSec: durationSec(h.timeout, 30),
            retries: h.retries ?? 3,
            startPeriodSec: durationSec(h.start_period, 0),
          };
        } catch (error) {
          throw new InputError(at('healthcheck'), (error as Error).message);
        }
      }
    }
    const dependsOn = Array.isArray(s.depends_on)
      ? s.depends_on.map((service) => ({ service, condition: 'service_started' as const }))
      : Object.entries(s.depends_on ?? {}).map(([service, d]) => ({
          service,
          condition: d.condition ?? ('service_started' as const),
        }));
    services.push({
      name,
      ...(s.image ? { image: s.image } : {}),
      ...(build ? { build } : {}),
      ...(s.command !== undefined ? { command: argv(s.command) } : {}),
      ...(s.entrypoint !== undefined ? { entrypoint: argv(s.entrypoint) } : {}),
      environment,
      ...(s.working_dir ? { workingDir: s.working_dir } : {}),
      ...(s.user !== undefined ? { user: String(s.user) } : {}),
      ...(healthcheck ? { healthcheck } : {}),
      dependsOn,
    });
  }
  const main = services.find((s) => s.name === 'main');
  if (!main) throw new InputError({ file, field: 'services.main' }, 'the compose file has no `main` service');
  const names = new Set(services.map((s) => s.name));
  for (const s of services)
    for (const d of s.dependsOn)
      if (!names.has(d.service) || d.service === s.name)
        throw new InputError(
          { file, line: lineOf(['services', s.name, 'depends_on']), field: `services.${s.name}.depends_on` },
          `depends on \`${d.service}\`, which is not another service of this file`,
        );
  const sidecars = services.filter((s) => s !== main);
  for (const s of sidecars)
    if (!s.image && !s.build)
      throw new InputError(
        { file, line: lineOf(['services', s.name]), field: `services.${s.name}` },
        'a service needs `image` or `build`',
      );
  return { file, main, sidecars: startOrder(sidecars, file), warnings };
}

/** Sidecars in an order where each starts after what it depends on. @throws InputError on a cycle */
function startOrder(sidecars: ComposeService[], file: string): ComposeService[] {
  const out: ComposeService[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const byName = new Map(sidecars.map((s) => [s.name, s]));
  const visit = (s: ComposeService): void => {
    if (state.get(s.name) === 'done') return;
    if (state.get(s.name) === 'visiting')
      throw new InputError({ file, field: `services.${s.name}.depends_on` }, 'depends_on makes a cycle');
    state.set(s.name, 'visiting');
    for (const d of s.dependsOn) {
      const dep = byName.get(d.service);
      if (dep) visit(dep);
    }
    state.set(s.name, 'done');
    out.push(s);
  };
  for (const s of sidecars) visit(s);
  return out;
}

/** What starting the sidecars needs from the provider. */
export interface SidecarContext {
  docker: Docker;
  images: ImageService;
  jobId: string;
  trialName: string;
  /** The stem of built sidecar images' names (`<stem>-<service>`): the task's image name. */
  imageStem: string;
  /** Also on the default bridge (the task's network is `public`). */
  publicNetwork: boolean;
  bases?: BaseImage[];
  buildTimeoutSec?: number;
  onLog?: (line: string) => void;
  signal?: AbortSignal;
}

/** The trial's sidecar services and their private network; `stop()` removes them all. */
export class Sidecars {
  private readonly containers = new Map<string, Docker.Container>();
  /** Each sidecar's read-only `/etc/hosts`, `/etc/resolv.conf`, `/etc/hostname` (etc-files.ts). */
  private readonly etcs: ContainerEtcFiles[] = [];
  private stopped = false;

  private constructor(
    private readonly docker: Docker,
    /** The trial's private network (the main container joins it as `main`). */
    readonly network: string,
    private readonly logs: (service: string, text: string) => void,
  ) {}

  /**
   * Builds (or finds) each sidecar's image, creates the trial's network, starts the sidecars in
   * dependency order (each after what it depends on reached its condition), then waits for what
   * `main` depends on.
   * @param logs receives each sidecar's output when the trial stops
   * @throws SidecarError when a service fails to start, becomes unhealthy, or is not ready within
   *   the build timeout; everything started is removed first
   */
  static async start(
    project: ComposeProject,
    context: SidecarContext,
    logs: (service: string, text: string) => void,
  ): Promise<Sidecars> {
    const { docker } = context;
    const labels = { ...ownedLabels(context.jobId), [LABELS.trial]: context.trialName };
    const suffix = Math.random().toString(36).slice(2, 8);
    const name = `berth-${context.trialName
      .toLowerCase()
      .replace(/[^a-z0-9_.-]/g, '-')
      .slice(0, 40)}-${suffix}`;
    // Internal (no route out) and no address of the host on it: without `inhibit_ipv4` the
    // bridge holds the host's address, and every service the host listens on (0.0.0.0) is
    // reachable from the trial's container (test/docker/compose-sidecars.test.ts).
    await docker.createNetwork({
      Name: name,
      Internal: true,
      Options: { [NO_HOST_ADDRESS]: 'true' },
      Labels: labels,
      CheckDuplicate: true,
    });
    const sidecars = new Sidecars(docker, name, logs);
    try {
      const deadline = Date.now() + (context.buildTimeoutSec ?? 600) * 1000;
      for (const service of project.sidecars) {
        await sidecars.waitFor(service.dependsOn, deadline, context.signal);
        const image = service.build
          ? await context.images.build({
              contextDir: service.build.context,
              dockerfile: service.build.dockerfile,
              name: `${context.imageStem}-${service.name}`.toLowerCase(),
              ...(service.image ? { tags: [service.image] } : {}),
              ...(context.buildTimeoutSec !== undefined ? { timeoutSec: context.buildTimeoutSec } : {}),
              ...(context.bases ? { bases: context.bases } : {}),
              ...(context.onLog ? { onLog: context.onLog } : {}),
              ...(context.signal ? { signal: context.signal } : {}),
            })
          : await context.images.provide(service.image as string, {
              ...(context.bases ? { bases: context.bases } : {}),
              ...(context.onLog ? { onLog: context.onLog } : {}),
              ...(context.signal ? { signal: context.signal } : {}),
            });
        const h = service.healthcheck;
        const ns = (sec: number) => Math.round(sec * 1e9);
        const etc = await ContainerEtcFiles.create();
        sidecars.etcs.push(etc);
        const container = await docker.createContainer({
          name: `${name}-${service.name}`.slice(0, 120),
          Image: image,
          ...(service.command ? { Cmd: service.command } : {}),
          ...(service.entrypoint ? { Entrypoint: service.entrypoint } : {}),
          Env: Object.entries(service.environment).map(([k, v]) => `${k}=${v}`),
          ...(service.workingDir ? { WorkingDir: service.workingDir } : {}),
          ...(service.user ? { User: service.user } : {}),
          Labels: { ...labels, [LABELS.service]: service.name },
          ...(h
            ? {
                Healthcheck: {
                  Test: h.test,
                  Interval: ns(h.intervalSec),
                  Timeout: ns(h.timeoutSec),
                  Retries: h.retries,
                  StartPeriod: ns(h.startPeriodSec),
                },
              }
            : {}),
          HostConfig: { NetworkMode: name, AutoRemove: false, PidsLimit: 4096, Binds: etc.binds() },
          NetworkingConfig: { EndpointsConfig: { [name]: { Aliases: [service.name] } } },
        });
        sidecars.containers.set(service.name, container);
        if (context.publicNetwork) await docker.getNetwork('bridge').connect({ Container: container.id });
        await startContainer(container, etc);
        context.onLog?.(`service ${service.name}: started from ${image}`);
      }
      await sidecars.waitFor(project.main.dependsOn, deadline, context.signal);
    } catch (error) {
      await sidecars.stop();
      throw error;
    }
    return sidecars;
  }

  /** Waits until each dependency reached its condition. */
  private async waitFor(
    deps: ComposeService['dependsOn'],
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    for (const dep of deps) {
      const container = this.containers.get(dep.service);
      if (!container) continue;
      for (;;) {
        if (signal?.aborted) throw new SidecarError(`stopped while waiting for service ${dep.service}`);
        const state = (await container.inspect()).State;
        const health = state.Health?.Status;
        if (dep.condition === 'service_started' && state.Running) break;
        if (dep.condition === 'service_healthy') {
          if (health === 'healthy') break;
          if (health === 'unhealthy')
            throw new SidecarError(`service ${dep.service} is unhealthy: ${lastProbe(state)}`);
          if (!health && state.Running) break; // no healthcheck: started is healthy, as compose says
        }
        if (
          dep.condition === 'service_completed_successfully' &&
          !state.Running &&
          state.Status === 'exited'
        ) {
          if (state.ExitCode === 0) break;
          throw new SidecarError(`service ${dep.service} exited with code ${state.ExitCode}`);
        }
        if (!state.Running && state.Status === 'exited' && dep.condition !== 'service_completed_successfully')
          throw new SidecarError(
            `service ${dep.service} exited with code ${state.ExitCode} before it was ready`,
          );
        if (Date.now() > deadline)
          throw new SidecarError(
            `service ${dep.service} was not ${dep.condition.replace('service_', '')} in time`,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /**
   * Pauses every sidecar (the engine's cgroup freezer, as `Environment.halt` pauses the trial's
   * container): none of them runs until `stop()` removes it. One that is paused already or not
   * running is left as it is. Safe twice.
   */
  async pause(): Promise<void> {
    await Promise.all([...this.containers.values()].map(pauseContainer));
  }

  /** Keeps each sidecar's output (through `logs`), then removes the sidecars and the network. Safe twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const [service, container] of this.containers) {
      try {
        const out = (await container.logs({ stdout: true, stderr: true, tail: 2000 })) as unknown as Buffer;
        this.logs(service, demuxDockerStream(out).output);
      } catch {
        // gone already
      }
      await container.remove({ force: true, v: true }).catch(() => undefined);
    }
    for (const etc of this.etcs) await etc.remove().catch(() => undefined);
    await this.docker
      .getNetwork(this.network)
      .remove()
      .catch(() => undefined);
  }
}

/** A sidecar service did not come up (Harbor's `docker compose up --wait` failing). */
export class SidecarError extends Error {
  override name = 'SidecarError';
}

function lastProbe(state: { Health?: { Log?: Array<{ Output?: string }> } }): string {
  const log = state.Health?.Log ?? [];
  return (log[log.length - 1]?.Output ?? 'no probe output').trim().slice(0, 300);
}
