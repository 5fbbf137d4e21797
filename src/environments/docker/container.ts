/**
 * A Docker container as a berth `Environment`: one long-lived container per
 * trial, commands run with `docker exec`, files moved as tar streams.
 *
 * Limits (Harbor's `[environment]`, defaults and enforcement in limits.ts):
 * `cpus`, `memory_mb` (no swap), `storage_mb`, a pids limit (a fork bomb stops
 * there), CPU time and file size per command; and the network: `public` is the default bridge,
 * `no-network` is a container with no network endpoint but loopback. The
 * network can be changed while the container runs (`setNetworkPolicy`,
 * `connectNetwork`, `disconnectNetwork`), which per-phase network modes use. Its `/etc/hosts`,
 * `/etc/resolv.conf` and `/etc/hostname` are berth's, bound read-only and written again after
 * each network change (etc-files.ts), not the engine's writable ones.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { BerthError } from '../../errors.ts';
import {
  DEFAULT_OUTPUT_BYTES,
  type ResourceLimits,
  resolveLimits,
  truncationMark,
} from '../../sandbox/limits.ts';
import type { NetworkPolicy } from '../../tasks/task.ts';
import { unrecordedPlaceRefusal } from '../../trials/verifier-environment.ts';
import {
  type CopyLimits,
  type CopyReport,
  DEFAULT_COPY_LIMITS,
  extractTarBeneath,
} from '../../util/safe-fs.ts';
import { shellQuote } from '../../util/shell.ts';
import {
  COPY_TIMEOUT_SEC,
  CopyTimeoutError,
  type Environment,
  type ExecOptions,
  type ExecResult,
  type FileSystemChange,
  type ToolInstallRecord,
} from '../environment.ts';
import type { Sidecars } from './compose.ts';
import type { EgressGateway } from './egress/gateway.ts';
import { ContainerNetworkSwitch } from './egress/network-switch.ts';
import { ContainerEtcFiles } from './etc-files.ts';
import {
  fillCommand,
  imageVolumeDirs,
  tmpfsOptions,
  type VolumeDir,
  volumeRefusal,
} from './image-volumes.ts';
import { LABELS, ownedLabels } from './labels.ts';
import { pauseContainer, startContainer } from './lifecycle.ts';
import { ContainerLimits, isStorageOptError, refuseStorageOpt, storageOptWorth } from './limits.ts';
import { tarPath } from './tar.ts';

/** A host folder bind-mounted into the container. */
export interface Mount {
  host: string;
  container: string;
  readOnly?: boolean;
}

export interface ContainerOptions {
  docker: Docker;
  image: string;
  /** Container name (made unique by the caller), or undefined for a generated one. */
  name?: string;
  jobId: string;
  trialName?: string;
  taskName?: string;
  /** Working directory; default the image's WORKDIR, else `/`. */
  workdir?: string;
  /** The resource limits (src/sandbox/limits.ts); default from `cpus`, `memoryMb` and `pidsLimit`. */
  limits?: ResourceLimits;
  cpus?: number;
  memoryMb?: number;
  /** Maximum number of processes and threads; default 4096. */
  pidsLimit?: number;
  network: NetworkPolicy;
  env?: Record<string, string>;
  /**
   * The trial's sidecar services (compose.ts): the container joins their private network as
   * `main` before it starts, keeps it through every network switch, and stopping the
   * environment removes them.
   */
  sidecars?: Sidecars;
  /** Devices for the container (GPUs: accelerators.ts). */
  deviceRequests?: Docker.DeviceRequest[];
  mounts?: Mount[];
  /** Default user of `exec` (a name or uid). */
  user?: string;
  /** The file the image comes from (the task's Dockerfile or compose file), named in a refusal of it. */
  imageFile?: string;
  /**
   * The trial's egress gateway (egress/gateway.ts), needed when any phase runs under an
   * allowlist. The environment then switches networks through it and removes it on stop.
   */
  egress?: EgressGateway;
}

/**
 * The container's command (after the image's entrypoint, if any): by absolute path and with its own
 * PATH, so that no folder of the image's PATH (a work folder's `.venv/bin`) decides what runs as it.
 */
const KEEPALIVE = [
  '/bin/sh',
  '-c',
  'PATH=/usr/sbin:/usr/bin:/sbin:/bin; trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done',
];

type EngineInfo = { NCPU?: number; Driver?: string; DriverStatus?: string[][] };
const infoCache = new WeakMap<Docker, Promise<EngineInfo>>();
function engineInfo(docker: Docker): Promise<EngineInfo> {
  let p = infoCache.get(docker);
  if (!p) {
    p = docker.info() as Promise<EngineInfo>;
    infoCache.set(docker, p);
  }
  return p;
}

/** What berth reads of an image's config. */
interface ImageConfig {
  /** WORKDIR ('' when unset). */
  workdir: string;
  /** Whether it has an ENTRYPOINT (which may start services, and starts again with the container). */
  entrypoint: boolean;
  /** Its VOLUME paths. */
  volumes: string[];
}

const imageConfigCache = new Map<string, Promise<ImageConfig>>();
/** The image's config (`ImageConfig`), inspected once a process. */
function imageConfig(docker: Docker, image: string): Promise<ImageConfig> {
  let p = imageConfigCache.get(image);
  if (!p) {
    p = docker
      .getImage(image)
      .inspect()
      .then((i) => ({
        workdir: i.Config?.WorkingDir ?? '',
        entrypoint: (i.Config?.Entrypoint?.length ?? 0) > 0,
        // As the engine cleans them (`VOLUME /data/` is /data).
        volumes: [
          ...new Set(
            Object.keys((i.Config?.Volumes as Record<string, unknown> | null | undefined) ?? {}).map((v) =>
              posix.normalize(v).replace(/(.)\/+$/, '$1'),
            ),
          ),
        ].sort(),
      }));
    imageConfigCache.set(image, p);
    p.catch(() => imageConfigCache.delete(image));
  }
  return p;
}

/** Names the task, the image and the file it comes from, for a refusal of the image. */
function imageWhere(options: ContainerOptions): string {
  const task = options.taskName ? `task ${options.taskName}: ` : '';
  return `${task}image ${options.image}${options.imageFile ? ` (${options.imageFile} or its base image)` : ''}`;
}

/**
 * The image's VOLUME paths as berth covers them (image-volumes.ts), or a refusal naming the task,
 * the image, its file and the path (`BERTH_IMAGE_VOLUME`) of one that cannot be made safe: where
 * its unseen writes could change what berth or a verifier runs (`unrecordedPlaceRefusal`), or over
 * a folder berth mounts.
 */
async function volumeDirs(
  docker: Docker,
  options: ContainerOptions,
  config: ImageConfig,
  labels: Record<string, string>,
): Promise<VolumeDir[]> {
  if (config.volumes.length === 0) return [];
  const where = imageWhere(options);
  const workdir = options.workdir ?? (config.workdir || '/');
  const mounted = (options.mounts ?? []).map((m) => m.container);
  for (const path of config.volumes) {
    const why =
      unrecordedPlaceRefusal(path, workdir, '/logs') ??
      mounted
        .filter((m) => m === path || m.startsWith(`${path.replace(/\/+$/, '')}/`) || path.startsWith(`${m}/`))
        .map((m) => `it overlaps ${m}, which berth mounts`)[0];
    if (why) throw volumeRefusal(where, path, why);
  }
  return imageVolumeDirs(docker, options.image, config.volumes, labels, where);
}

/** Every container this process started and has not removed yet (for Ctrl-C and exit). */
const live = new Set<DockerContainerEnvironment>();

/** Ids of live containers (for a synchronous last-chance removal on exit). */
export function liveContainerIds(): string[] {
  return [...live].map((c) => c.id);
}

let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Best effort on abrupt exit; `berth clean` removes anything left after a crash.
  process.once('exit', () => {
    const ids = liveContainerIds();
    if (ids.length === 0) return;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      process
        .getBuiltinModule?.('node:child_process')
        ?.execFileSync('docker', ['rm', '-f', ...ids], { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // nothing more to do here
    }
  });
}

const LOG_DIRS = '/logs/agent /logs/verifier /logs/artifacts';

/**
 * Shell lines (POSIX sh, builtins only but `sleep`) that stop every process the running shell's
 * user may signal, but the shell itself and pid 1 (`kill -STOP -1`: as root every process of the
 * container's pid namespace), again until no thread of them is runnable (each is stopped, traced
 * or a zombie) or 50 rounds passed. `kill -1` and a concurrent fork cannot miss each other (the
 * kernel aborts a fork whose parent got a signal meanwhile); the rounds catch a process another
 * one continued (SIGCONT) before it stopped itself. A thread in a system call stops when the
 * call returns: with SIGSTOP pending it runs no more of its own code. The exec's own shell must
 * run these (the `kill` builtin): a `kill` program, or a child shell, would stop that shell, and
 * the exec would never end. `ExecOptions.haltOnExit`.
 */
// biome-ignore-start lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates
const HALT_OTHERS = [
  'kill -s STOP -- -1 2>/dev/null; berth_h=0',
  'while [ $berth_h -lt 50 ]; do berth_h=$((berth_h + 1)); kill -s STOP -- -1 2>/dev/null; berth_run=',
  'for berth_t in /proc/[0-9]*/task/[0-9]*; do berth_p=${berth_t#/proc/}; berth_p=${berth_p%%/*}',
  '[ "$berth_p" = "$$" ] || [ "$berth_p" = 1 ] && continue; kill -0 "$berth_p" 2>/dev/null || continue',
  'berth_s=; read -r berth_s 2>/dev/null < "$berth_t/stat" || continue; berth_s=${berth_s##*") "}',
  'case ${berth_s%% *} in T|t|Z|X|x) ;; *) berth_run=1; break ;; esac; done',
  '[ -z "$berth_run" ] && break; sleep 0.02 2>/dev/null; done',
].join('\n');
// biome-ignore-end lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates

const SIGNALS: Record<number, string> = {
  9: 'SIGKILL',
  15: 'SIGTERM',
  2: 'SIGINT',
  6: 'SIGABRT',
  11: 'SIGSEGV',
  1: 'SIGHUP',
};

/** A running container. Create it with `DockerContainerEnvironment.create`. */
export class DockerContainerEnvironment implements Environment {
  readonly kind = 'docker';
  private stopped = false;
  private oomCount = 0;
  private oomEvents: number | undefined;
  /** The container's resource limits and what its commands ran into (set by `create`). */
  limits!: ContainerLimits;
  private eventStream: { destroy(): void } | undefined;
  private execCounter = 0;
  private currentNetwork: NetworkPolicy;
  private egress: EgressGateway | undefined;
  private networkSwitch: ContainerNetworkSwitch | undefined;
  /** Warnings about limits that could not be applied as asked. */
  readonly warnings: string[] = [];
  /** Processes running right after start: the keep-alive loop and its `sleep`, or what the entrypoint started. */
  private baselineCount = 2;
  /** How many times the container started again after `killStrayProcesses`. */
  restarts = 0;
  /** The image has an ENTRYPOINT: it runs again when the container starts again after `killStrayProcesses`. */
  entrypoint = false;
  /** `killStrayProcesses` stopped the container: the next command starts it again (`running`). */
  private down = false;
  /** `halt` froze the container for good: nothing starts it again. */
  private halted = false;
  /** The start in progress after `killStrayProcesses`, shared by the commands that wait for it. */
  private starting: Promise<void> | undefined;
  /**
   * The image's VOLUME paths, each a tmpfs of berth's (image-volumes.ts), whose writes the
   * container's diff does not list. `killStrayProcesses` starts the container again with each
   * emptied (the image's owner and mode stay; its files there, and the agent's, are gone).
   */
  readonly unrecorded: readonly string[] = [];
  /**
   * Harbor's `/logs`: `agent/`, `verifier/` and `artifacts/` are folders of the container
   * (mode 777), never bind mounts of the host: berth copies them out with `download`.
   */
  readonly logsDir = '/logs';
  /** The task's image the container started from, after --image-map (set by the provider). */
  image?: string;
  /** The installed agent the container's image carries (set by the provider). */
  toolInstall?: ToolInstallRecord;
  /** Where the model gateway's folder is mounted, when the trial asked for it. */
  modelGatewayDir?: string;
  /** The task's sidecar services, removed with the container. */
  private sidecars: Sidecars | undefined;
  /** berth's read-only `/etc/hosts`, `/etc/resolv.conf`, `/etc/hostname` (etc-files.ts), set by `create`. */
  private etc: ContainerEtcFiles | undefined;

  private constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    readonly workdir: string,
    network: NetworkPolicy,
    private readonly defaultUser: string | undefined,
  ) {
    this.currentNetwork = network;
  }

  get id(): string {
    return this.container.id;
  }

  /** Untrusted commands run without network when the current policy is `no-network`. */
  get isolated(): boolean {
    return this.currentNetwork.mode === 'no-network';
  }

  get network(): NetworkPolicy {
    return this.currentNetwork;
  }

  /**
   * Creates and starts a container.
   * @throws BerthError when the engine refuses (bad image, bad limits)
   */
  static async create(options: ContainerOptions): Promise<DockerContainerEnvironment> {
    const { docker } = options;
    const info = await engineInfo(docker);
    const warnings: string[] = [];
    const limits =
      options.limits ??
      resolveLimits(
        {
          ...(options.cpus !== undefined ? { cpus: options.cpus } : {}),
          ...(options.memoryMb !== undefined ? { memoryMb: options.memoryMb } : {}),
        },
        options.pidsLimit !== undefined ? { processes: options.pidsLimit } : {},
      );
    let nanoCpus: number | undefined;
    if (limits.cpus) {
      const cpus = info.NCPU && limits.cpus > info.NCPU ? info.NCPU : limits.cpus;
      if (cpus !== limits.cpus)
        warnings.push(`cpus = ${limits.cpus} asked, the engine has ${info.NCPU}: limited to ${cpus}`);
      nanoCpus = Math.round(cpus * 1e9);
    }
    const memory = limits.memoryBytes;
    let storageOpt = storageOptWorth(docker, info);
    const labels: Record<string, string> = ownedLabels(options.jobId);
    if (options.trialName) labels[LABELS.trial] = options.trialName;
    if (options.taskName) labels[LABELS.task] = options.taskName;
    const env = options.env ?? {};
    // A VOLUME path gets a capped tmpfs of berth's, not the engine's anonymous volume; one that
    // cannot be made safe is refused before berth makes anything of its own for the container.
    const config = await imageConfig(docker, options.image);
    const volumes = await volumeDirs(docker, options, config, labels);
    const tmpfsBytes = Math.min(limits.diskBytes, limits.memoryBytes);
    // The engine's own writable binds of these three files are replaced by berth's read-only ones.
    const etc = await ContainerEtcFiles.create();
    const binds = [
      ...(options.mounts ?? []).map((m) => `${m.host}:${m.container}${m.readOnly ? ':ro' : ''}`),
      ...etc.binds(),
    ];
    const createOptions = (withStorage: boolean): Docker.ContainerCreateOptions => ({
      name: options.name,
      Image: options.image,
      Cmd: KEEPALIVE,
      // The image's own HEALTHCHECK is off: the engine would run it all through the trial, also
      // while the verifier runs, and its command may run a script the agent edited (breaker12 F5:
      // a loop writing reward 1). A task's healthcheck is `[environment.healthcheck]`, run by berth.
      Healthcheck: { Test: ['NONE'] },
      WorkingDir: options.workdir,
      Labels: labels,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      User: options.user,
      HostConfig: {
        NanoCpus: nanoCpus,
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: limits.processes,
        ...(withStorage ? { StorageOpt: { size: String(limits.diskBytes) } } : {}),
        NetworkMode: 'bridge',
        ...(options.deviceRequests?.length ? { DeviceRequests: options.deviceRequests } : {}),
        Binds: binds,
        ...(volumes.length > 0
          ? { Tmpfs: Object.fromEntries(volumes.map((v) => [v.path, tmpfsOptions(v, tmpfsBytes)])) }
          : {}),
        Init: false,
        // Kept when it stops: the next command after `killStrayProcesses` starts it again; `stop()` removes it.
        AutoRemove: false,
      },
    });
    let container: Docker.Container;
    try {
      try {
        container = await docker.createContainer(createOptions(storageOpt));
      } catch (error) {
        if (!storageOpt || !isStorageOptError(error)) throw error;
        // The storage driver cannot enforce a size here: measure the writable layer instead.
        refuseStorageOpt(docker);
        storageOpt = false;
        container = await docker.createContainer(createOptions(false));
      }
    } catch (error) {
      await etc.remove();
      throw error;
    }
    // Registered before start so a failure still removes it.
    const environment = new DockerContainerEnvironment(
      docker,
      container,
      options.workdir ?? '/',
      options.network,
      options.user,
    );
    environment.warnings.push(...warnings);
    environment.etc = etc;
    environment.limits = new ContainerLimits(
      container,
      limits,
      {
        processes: limits.processes,
        memory_bytes: limits.memoryBytes,
        cpus: limits.cpus ?? null,
        disk_bytes: limits.diskBytes,
        enforced_by: {
          processes: 'docker',
          memory: 'docker',
          cpus: nanoCpus ? 'docker' : 'none',
          cpu_time: 'rlimit',
          file_size: 'rlimit',
          disk: storageOpt ? 'storage-opt' : 'watch',
        },
        notes: [...warnings],
      },
      () => environment.oomEvents ?? 0,
    );
    live.add(environment);
    installExitHook();
    try {
      if (options.sidecars) {
        environment.sidecars = options.sidecars;
        await docker
          .getNetwork(options.sidecars.network)
          .connect({ Container: container.id, EndpointConfig: { Aliases: ['main'] } });
      }
      if (options.egress) {
        // The egress gateway switches networks (public, allowlist, no-network) before start.
        environment.egress = options.egress;
        environment.networkSwitch = new ContainerNetworkSwitch(docker, container.id, {
          publicNetworks: ['bridge'],
          gateway: options.egress,
          ...(options.sidecars ? { keep: [options.sidecars.network] } : {}),
        });
        await environment.networkSwitch.apply(options.network);
      } else if (options.network.mode === 'no-network') {
        // `no-network`: leave the default bridge before start; loopback (and the task's own services) only.
        await docker.getNetwork('bridge').disconnect({ Container: container.id, Force: true });
      }
      if (options.network.mode === 'allowlist' && !options.egress) {
        throw new BerthError(
          'BERTH_UNSUPPORTED',
          'network_mode = "allowlist" needs the egress proxy (not part of the Docker environment itself)',
        );
      }
      // Fail closed should the engine still have made a volume (a path it reads otherwise than berth).
      if (volumes.length > 0) {
        const made = ((await container.inspect()).Mounts ?? []).filter((m) => m.Type === 'volume');
        if (made.length > 0)
          throw volumeRefusal(
            imageWhere(options),
            made.map((m) => m.Destination).join(', '),
            "the engine made a volume there beside berth's tmpfs",
          );
      }
      await environment.watchOom();
      await startContainer(container, etc);
      await environment.limits.attach();
      // The image's files at its VOLUME paths, by its own tar, before any command of the trial.
      for (const v of volumes) {
        if (!v.archive) continue;
        const run = await environment.exec(fillCommand(v), {
          user: 'root',
          cwd: '/',
          timeoutSec: 300,
          input: v.archive,
        });
        if (run.exitCode !== 0)
          throw volumeRefusal(
            imageWhere(options),
            v.path,
            `the image's files there could not be copied into berth's tmpfs (${run.output.trim().slice(-300)})`,
          );
      }
      if (volumes.length > 0)
        (environment as { unrecorded: readonly string[] }).unrecorded = volumes.map((v) => v.path);
      environment.entrypoint = config.entrypoint;
      (environment as { workdir: string }).workdir = options.workdir ?? (config.workdir || '/');
      // One exec: Harbor's log folders (writable by any user, as Harbor's `chmod_dir`), the workdir,
      // and with an entrypoint how many processes it started (counted apart from the agent's later).
      const mkdirs = `mkdir -p ${LOG_DIRS} ${options.workdir ? shellQuote(options.workdir) : ''}; chmod 777 ${LOG_DIRS}; `;
      if (config.entrypoint) {
        const out = await environment.quiet(`${mkdirs}for p in /proc/[0-9]*; do echo \${p#/proc/}; done`);
        // Without the listing shell itself.
        environment.baselineCount = Math.max(0, out.split('\n').filter(Boolean).length - 1);
      } else {
        await environment.quiet(mkdirs);
      }
    } catch (error) {
      await environment.stop();
      throw error;
    }
    return environment;
  }

  /**
   * Runs `command` with bash (sh when the image has no bash) in its own process
   * group; at `timeoutSec` the whole group is killed. Exit code 137 with the
   * cgroup's OOM-kill counter raised is reported as `oomKilled`.
   */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const started = Date.now();
    const restoreNetwork =
      options.network && !samePolicy(options.network, this.currentNetwork) ? this.currentNetwork : undefined;
    if (options.network && restoreNetwork) await this.setNetworkPolicy(options.network);
    try {
      return await this.execInner(command, options, started);
    } finally {
      if (restoreNetwork) await this.setNetworkPolicy(restoreNetwork);
    }
  }

  private async execInner(command: string, options: ExecOptions, started: number): Promise<ExecResult> {
    await this.running();
    const pidFile = `/tmp/.berth-exec-${process.pid}-${++this.execCounter}.pid`;
    // Record the group leader's pid, hide the command variable, run under bash (or sh).
    // The exec's shell is its process group (and session) leader: killing the group kills the command's tree.
    // With haltOnExit this shell stops every other process of its user as the command ends.
    const halt = options.haltOnExit ? `\n${HALT_OTHERS}\n` : ' ';
    const script = `${this.limits.ulimitPrefix(options.timeoutSec)}echo $$ > ${pidFile} 2>/dev/null; c=$BERTH_EXEC_CMD; unset BERTH_EXEC_CMD; if [ -x /bin/bash ]; then /bin/bash -c "$c"; else /bin/sh -c "$c"; fi; r=$?;${halt}rm -f ${pidFile}; exit $r`;
    const env = { ...(options.env ?? {}), BERTH_EXEC_CMD: command };
    const withInput = options.input !== undefined;
    const exec = await this.container.exec({
      Cmd: ['/bin/sh', '-c', script],
      AttachStdin: withInput,
      AttachStdout: true,
      AttachStderr: true,
      WorkingDir: options.cwd ?? this.workdir,
      User: options.user ?? this.defaultUser,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    });
    const stream = (await exec.start({ hijack: true, stdin: withInput })) as NodeJS.ReadWriteStream & {
      destroy(): void;
    };
    if (withInput) {
      // Standard input, then a half-close so the command sees its end.
      stream.write(
        typeof options.input === 'string' ? options.input : Buffer.from(options.input as Uint8Array),
      );
      stream.end();
    }
    const max = Math.min(
      options.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES,
      this.limits.limits.outputBytes ?? Number.POSITIVE_INFINITY,
    );
    const chunks: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    let file: WriteStream | undefined;
    if (options.outputFile) {
      await mkdir(dirname(options.outputFile), { recursive: true });
      file = createWriteStream(options.outputFile);
    }
    const sink = new PassThrough();
    // Past the cap the output is read and dropped (the command runs on), counted for the mark.
    sink.on('data', (chunk: Buffer) => {
      const room = max - size;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (part.length > 0) {
        chunks.push(part);
        file?.write(part);
        size += part.length;
      }
      dropped += chunk.length - part.length;
    });
    this.docker.modem.demuxStream(stream, sink, sink);
    const ended = new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    let timedOut = false;
    let aborted = false;
    const kill = async (): Promise<void> => {
      try {
        const k = await this.container.exec({
          Cmd: [
            'sh',
            '-c',
            // With haltOnExit, the rest as at the command's end (as root: every process but pid 1).
            `p=$(cat ${pidFile} 2>/dev/null) && [ -n "$p" ] && { kill -KILL -$p 2>/dev/null; kill -KILL $p 2>/dev/null; }; ${options.haltOnExit ? `\n${HALT_OTHERS}\n` : ''}true`,
          ],
          User: 'root',
        });
        const s = await k.start({ hijack: true, stdin: false });
        await new Promise<void>((r) => {
          s.on('end', r);
          s.on('close', r);
          s.resume();
        });
      } catch {
        // the container may be gone already
      }
    };
    const timer =
      options.timeoutSec !== undefined
        ? setTimeout(() => {
            timedOut = true;
            void kill();
          }, options.timeoutSec * 1000)
        : undefined;
    const before = this.limits.snapshot();
    let diskFull = false;
    const stopWatch = this.limits.watchDisk(() => {
      diskFull = true;
      void kill();
    });
    const onAbort = (): void => {
      aborted = true;
      void kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    await ended;
    stopWatch();
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    sink.end();
    const truncated = dropped > 0;
    if (truncated) {
      const mark = truncationMark(max, dropped);
      chunks.push(Buffer.from(mark));
      file?.write(mark);
    }
    if (file) await new Promise<void>((r) => file?.end(r));
    const inspect = await exec.inspect();
    let exitCode: number | null = inspect.ExitCode ?? null;
    let signal: string | undefined;
    if (exitCode !== null && exitCode > 128) signal = SIGNALS[exitCode - 128] ?? `signal ${exitCode - 128}`;
    if (timedOut || aborted) {
      exitCode = null;
      signal = 'SIGKILL';
    }
    let oomKilled: boolean | undefined;
    if (inspect.ExitCode === 137 && !timedOut && !aborted) oomKilled = (await this.newOomKills(500)) > 0;
    if (timedOut || aborted) void this.quiet(`rm -f ${pidFile}`);
    const hit = this.limits.commandHits({
      before,
      exitCode: inspect.ExitCode ?? null,
      ...(oomKilled !== undefined ? { oomKilled } : {}),
      diskFull,
      truncated,
    });
    if (hit.includes('memory')) oomKilled = true;
    return {
      exitCode,
      signal,
      timedOut,
      output: Buffer.concat(chunks).toString('utf8'),
      truncated,
      durationSec: (Date.now() - started) / 1000,
      ...(oomKilled !== undefined ? { oomKilled } : {}),
      ...(hit.length > 0 ? { limitsHit: hit } : {}),
    };
  }

  /** Runs a short root command, ignoring its exit code; returns its output. */
  async quiet(command: string): Promise<string> {
    try {
      await this.running();
      const exec = await this.container.exec({
        Cmd: ['/bin/sh', '-c', command],
        AttachStdout: true,
        AttachStderr: true,
        User: 'root',
      });
      const stream = await exec.start({ hijack: true, stdin: false });
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      this.docker.modem.demuxStream(stream, out, out);
      await new Promise<void>((r) => {
        stream.on('end', r);
        stream.on('close', r);
      });
      return Buffer.concat(chunks).toString('utf8');
    } catch {
      return '';
    }
  }

  /**
   * Number of processes the kernel killed for exceeding the memory limit since
   * the last call (the engine's `oom` events for this container). Waits up to
   * `graceMs` for an event still in flight.
   */
  async newOomKills(graceMs = 20): Promise<number> {
    if (this.oomEvents === undefined) return 0;
    const deadline = Date.now() + graceMs;
    while (this.oomEvents === this.oomCount && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    const n = this.oomEvents - this.oomCount;
    this.oomCount = this.oomEvents;
    return n;
  }

  /** Counts the engine's `oom` events for this container (only when a memory limit is set). */
  private async watchOom(): Promise<void> {
    this.oomEvents = 0;
    const stream = (await this.docker.getEvents({
      filters: { container: [this.container.id], event: ['oom'] },
    })) as NodeJS.ReadableStream & {
      destroy(): void;
    };
    this.eventStream = stream;
    stream.on('data', (chunk: Buffer) => {
      this.oomEvents =
        (this.oomEvents ?? 0) +
        chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.includes('"oom"')).length;
    });
    stream.on('error', () => undefined);
  }

  /**
   * Capability "process control": kills the container's PID 1 and leaves the container stopped.
   * The kernel kills every process of a pid namespace when its init dies, so no process the
   * agent started survives, whatever it does (fork a successor and exit, setsid, ignore
   * signals, inject code into a process berth would keep): nothing can race this kill, as it
   * could race a kill that lists processes first. The writable layer, networks and limits
   * stay, and the engine's record of changes (`fileSystemChanges`) and the files (`archive`,
   * `download`, `extractArchive`) are read from the stopped container: nothing runs in it until
   * the next command (`exec`) starts it again, and with it the image's entrypoint, which may be
   * a file the agent edited (so an image with an entrypoint is verified in a fresh container:
   * src/trials/verifier-environment.ts). (Cost: docs/security.md.)
   * @returns how many processes ran besides the keep-alive loop (and the entrypoint's, as at start)
   */
  async killStrayProcesses(): Promise<number> {
    let running = 0;
    try {
      running = (await this.container.top()).Processes?.length ?? 0;
    } catch {
      // not running: nothing to count
    }
    try {
      await this.container.kill({ signal: 'SIGKILL' });
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 409) throw error;
    }
    await this.container.wait({ condition: 'not-running' });
    this.down = true;
    return Math.max(0, running - this.baselineCount);
  }

  /**
   * Starts the container again when `killStrayProcesses` left it stopped (not after `halt`):
   * the image's entrypoint and berth's keep-alive loop run again, in a new cgroup.
   */
  private async running(): Promise<void> {
    if (!this.down || this.halted || this.stopped) return;
    this.starting ??= (async () => {
      try {
        if (this.etc) await startContainer(this.container, this.etc);
        else await this.container.start();
        await this.limits.afterRestart();
        this.restarts++;
        this.down = false;
      } finally {
        this.starting = undefined;
      }
    })();
    await this.starting;
  }

  /**
   * Capability "halt": freezes every process of the container at once (the engine's pause: the
   * cgroup freezer, which no process of the container can leave or undo) and leaves it so until
   * `stop()` removes it. Nothing of it runs again, not even the image's entrypoint; its file
   * system stays readable (`archive`, `download`: the engine reads a paused container's) and its
   * cgroup's counters too (the phase's limit checks); `exec` fails. The task's sidecar services
   * (compose.ts) are paused with it. Safe to call twice.
   */
  async halt(): Promise<void> {
    this.halted = true;
    await pauseContainer(this.container);
    await this.sidecars?.pause();
  }

  /** Capability "process list": `<pid> <start time>` of each process, from the engine's `top`. */
  async processList(): Promise<string[]> {
    // Stopped by `killStrayProcesses`: nothing runs.
    if (this.down) return [];
    const top = (await this.container.top({ ps_args: '-o pid,lstart' })) as {
      Titles?: string[];
      Processes?: string[][];
    };
    return (top.Processes ?? []).map((row) => row.join(' ').replace(/\s+/g, ' ').trim());
  }

  /** Capability "file-system record": the container's diff against its image (the engine's record). */
  async fileSystemChanges(): Promise<FileSystemChange[]> {
    const kinds: FileSystemChange['kind'][] = ['changed', 'added', 'deleted'];
    const changes = ((await this.container.changes()) ?? []) as { Path: string; Kind: number }[];
    return changes.map((c) => ({ path: c.Path, kind: kinds[c.Kind] ?? 'changed' }));
  }

  /**
   * Capability "folder transfer": the engine's tar stream of `path` (links stay links, inside the
   * archive). The request and the stream are bounded by `timeoutSec` (`COPY_TIMEOUT_SEC`): past
   * it the stream fails with `CopyTimeoutError`.
   */
  async archive(path: string, options: { timeoutSec?: number } = {}): Promise<Readable> {
    const abort = new AbortController();
    let stream: Readable | undefined;
    const clear = copyDeadline(`the copy of ${path} out of the container`, options.timeoutSec, (error) => {
      abort.abort(error);
      stream?.destroy(error);
    });
    try {
      stream = (await this.container.getArchive({ path, abortSignal: abort.signal })) as Readable;
    } catch (error) {
      clear();
      throw abort.signal.aborted ? abort.signal.reason : error;
    }
    stream.once('close', clear);
    return stream;
  }

  /**
   * Extracts a tar stream into the folder `path` of this container (the engine resolves it inside
   * the container). A stream that fails ends the request (the engine keeps what it extracted so
   * far) and its error is thrown; past `timeoutSec` (`COPY_TIMEOUT_SEC`) the request is aborted,
   * the stream destroyed, and `CopyTimeoutError` thrown.
   */
  async extractArchive(
    path: string,
    archive: Readable,
    options: { timeoutSec?: number } = {},
  ): Promise<void> {
    const abort = new AbortController();
    let failed: Error | undefined;
    archive.once('error', (error) => {
      failed ??= error;
      abort.abort();
    });
    const clear = copyDeadline(`the copy into ${path} of the container`, options.timeoutSec, (error) => {
      failed ??= error;
      abort.abort(error);
      archive.destroy(error);
    });
    try {
      await this.container.putArchive(archive, { path, abortSignal: abort.signal });
    } catch (error) {
      throw failed ?? error;
    } finally {
      clear();
    }
    if (failed) throw failed;
  }

  /**
   * Switches the container between `public` (default bridge) and `no-network`, and to and
   * from `allowlist` when it was created with an egress gateway.
   */
  async setNetworkPolicy(policy: NetworkPolicy): Promise<void> {
    if (samePolicy(policy, this.currentNetwork)) return;
    if (this.networkSwitch) {
      await this.networkSwitch.apply(policy);
      await this.etc?.refresh(this.container);
      this.currentNetwork = policy;
      return;
    }
    if (policy.mode === 'allowlist') {
      throw new BerthError(
        'BERTH_UNSUPPORTED',
        'network_mode = "allowlist" needs the egress proxy (not part of the Docker environment itself)',
      );
    }
    const inspected = await this.container.inspect();
    const attached = Object.keys(inspected.NetworkSettings.Networks ?? {});
    if (policy.mode === 'no-network') {
      // The task's own services network stays: it has no route out.
      for (const name of attached) if (name !== this.sidecars?.network) await this.leave(name);
    } else if (!attached.includes('bridge')) {
      await this.join('bridge');
    }
    // Once for the whole change (the files list every network the container is on).
    await this.etc?.refresh(this.container);
    this.currentNetwork = policy;
  }

  /** Names of the networks the container is attached to. */
  async networks(): Promise<string[]> {
    const inspected = await this.container.inspect();
    return Object.keys(inspected.NetworkSettings.Networks ?? {});
  }

  /** Attaches the container to a network (optionally with DNS aliases). */
  async connectNetwork(name: string, aliases?: string[]): Promise<void> {
    await this.join(name, aliases);
    await this.etc?.refresh(this.container);
  }

  async disconnectNetwork(name: string): Promise<void> {
    await this.leave(name);
    await this.etc?.refresh(this.container);
  }

  /** Attaches the container to a network; the caller writes the `/etc` files again. */
  private async join(name: string, aliases?: string[]): Promise<void> {
    await this.docker
      .getNetwork(name)
      .connect({ Container: this.container.id, EndpointConfig: aliases ? { Aliases: aliases } : undefined });
  }

  /** Detaches the container from a network; the caller writes the `/etc` files again. */
  private async leave(name: string): Promise<void> {
    await this.docker.getNetwork(name).disconnect({ Container: this.container.id, Force: true });
  }

  /** Records a policy set from outside (e.g. by a proxy that manages networks itself). */
  markNetworkPolicy(policy: NetworkPolicy): void {
    this.currentNetwork = policy;
  }

  /**
   * Copies a host file or folder to `environmentPath` (a folder's contents land
   * inside it). Files are made readable by every user (`a+rX`), so a non-root
   * agent or verifier can read them; one tar stream, no extra exec unless the
   * parent folder is missing.
   */
  async upload(hostPath: string, environmentPath: string): Promise<void> {
    const target = environmentPath.replace(/\/+$/, '') || '/';
    const archive = await tarPath(hostPath, basename(target));
    const abort = new AbortController();
    const clear = copyDeadline(`the upload of ${hostPath} to ${target}`, undefined, (error) =>
      abort.abort(error),
    );
    const put = () =>
      this.container.putArchive(archive, { path: dirname(target), abortSignal: abort.signal });
    try {
      await put();
    } catch (error) {
      if (abort.signal.aborted) throw abort.signal.reason;
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      await this.quiet(`mkdir -p ${shellQuote(dirname(target))}`);
      await put().catch((again) => {
        throw abort.signal.aborted ? abort.signal.reason : again;
      });
    } finally {
      clear();
    }
  }

  /**
   * Copies a file or folder out of the container into `hostPath` as data (the engine's tar
   * stream, read by src/util/safe-fs.ts: regular files and folders only, capped; links and
   * special files recorded, never created on the host).
   * @throws the engine's error (status 404 when the path does not exist)
   */
  async download(environmentPath: string, hostPath: string, limits?: CopyLimits): Promise<CopyReport> {
    const timeoutSec = limits?.timeoutSec ?? DEFAULT_COPY_LIMITS.timeoutSec;
    const started = Date.now();
    // The request itself is bounded too (the engine walks the folder before the first byte).
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(1, timeoutSec * 1000));
    let stream: Readable;
    try {
      stream = (await this.container.getArchive({
        path: environmentPath,
        abortSignal: abort.signal,
      })) as Readable;
    } catch (error) {
      if (!abort.signal.aborted) throw error;
      const report: CopyReport = {
        files: 0,
        directories: 0,
        bytes: 0,
        skipped: [],
        skippedCount: 1,
        timedOut: true,
      };
      report.skipped.push({ path: '.', kind: 'directory', reason: 'timed-out' });
      return report;
    } finally {
      clearTimeout(timer);
    }
    const left = Math.max(0, timeoutSec - (Date.now() - started) / 1000);
    return extractTarBeneath(stream, hostPath, { ...limits, timeoutSec: left });
  }

  /** Removes the container (and its anonymous volumes). Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await this.container.remove({ force: true, v: true });
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      // Gone already, or being removed.
      if (status !== 404 && status !== 409) throw error;
    } finally {
      live.delete(this);
      this.eventStream?.destroy();
      await this.etc?.remove();
      await this.egress?.stop();
      await this.sidecars?.stop();
    }
  }
}

/**
 * The one wall-clock bound of a copy into or out of a container: after `timeoutSec`
 * (`COPY_TIMEOUT_SEC` when undefined) `onTimeout` gets a `CopyTimeoutError` naming `what`.
 * @returns the function that clears the bound (the copy ended)
 */
function copyDeadline(
  what: string,
  timeoutSec: number | undefined,
  onTimeout: (error: CopyTimeoutError) => void,
): () => void {
  const sec = timeoutSec ?? COPY_TIMEOUT_SEC;
  const timer = setTimeout(
    () => onTimeout(new CopyTimeoutError(`${what} did not end within ${sec} s`)),
    Math.max(1, sec * 1000),
  );
  return () => clearTimeout(timer);
}

function samePolicy(a: NetworkPolicy, b: NetworkPolicy): boolean {
  if (a.mode !== b.mode) return false;
  if (a.mode === 'allowlist' && b.mode === 'allowlist')
    return a.allowedHosts.join(',') === b.allowedHosts.join(',');
  return true;
}
