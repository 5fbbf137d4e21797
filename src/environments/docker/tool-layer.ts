/**
 * An installed agent in a Docker environment: one image layer over the task's image with the
 * agent's prepared folder copied to `/opt/berth/agents/<name>-<version>/`, built once per
 * (agent, version, task image) and found by its tag afterwards, so later trials start their
 * container from it with nothing to install. Nothing runs inside the build (no network, no
 * package script): the folder is complete when it leaves the host (src/agents/installed/prepare.ts).
 *
 * The layer's tag is `berth-agent/<name>:<version>-<hash of the task image id>`: outside
 * `berth-cache/*`, so `berth clean --images` keeps it; `berth clean --cache` removes it.
 */
import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import type { Platform, ToolInstall, ToolInstallRecord } from '../environment.ts';
import type { ImageService } from './images.ts';
import { LABELS } from './labels.ts';

/** Repository of every agent layer berth builds. */
export const TOOL_LAYER_REPO = 'berth-agent';
/** Label of an agent layer: its platform (`x64-glibc`). */
const PLATFORM_LABEL = 'dev.berth.tool-platform';
/** Changes when the layer's layout changes, so older layers are not reused. */
const LAYER_FORMAT = '1';

/** Where the agent's folder lies in the container. */
export function toolHome(tool: Pick<ToolInstall, 'name' | 'version'>): string {
  return `/opt/berth/agents/${tool.name}-${tool.version}`;
}

/** The layer's tag for a tool over the image with id `baseId`. */
export function toolLayerTag(tool: Pick<ToolInstall, 'name' | 'version'>, baseId: string): string {
  const hash = createHash('sha256')
    .update(`${LAYER_FORMAT}\0${tool.name}\0${tool.version}\0${baseId}`)
    .digest('hex')
    .slice(0, 16);
  const safe = (s: string) => s.toLowerCase().replace(/[^a-z0-9_.-]/g, '-');
  return `${TOOL_LAYER_REPO}/${safe(tool.name)}:${safe(tool.version)}-${hash}`.slice(0, 200);
}

/** The image's CPU architecture as berth names it. */
function archOf(architecture: string | undefined): Platform['arch'] {
  if (architecture === 'amd64' || architecture === 'x86_64') return 'x64';
  if (architecture === 'arm64' || architecture === 'aarch64') return 'arm64';
  throw new Error(`the task image's architecture ${architecture ?? '(none)'} has no agent builds`);
}

/**
 * The C library of an image: musl when its dynamic loader is musl's (Alpine), else glibc.
 * Runs one short container from the image without network.
 */
async function libcOf(docker: Docker, image: string, jobId: string): Promise<Platform['libc']> {
  const container = await docker.createContainer({
    Image: image,
    Entrypoint: ['/bin/sh', '-c'],
    Cmd: [
      'for f in /lib/ld-musl-* /usr/lib/ld-musl-*; do [ -e "$f" ] && echo musl && exit 0; done; echo glibc',
    ],
    User: '0',
    NetworkDisabled: true,
    Labels: { [LABELS.managed]: '1', [LABELS.job]: jobId },
    // Read-only: the task image's /bin/sh writes nothing, not even the engine's /etc/hosts,
    // /etc/resolv.conf and /etc/hostname (read-only with the root file system).
    HostConfig: { NetworkMode: 'none', ReadonlyRootfs: true },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const logs = (await container.logs({ stdout: true, stderr: true })).toString('latin1');
    if (StatusCode !== 0)
      throw new Error(`the task image cannot run /bin/sh (exit ${StatusCode}): ${logs.slice(-300)}`);
    return /musl/.test(logs) ? 'musl' : 'glibc';
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/**
 * Returns the image to run for `baseImage` with `tool` installed, building the layer when it
 * is not cached, and the record of what was done.
 * @throws Error (with the preparation's or the build's message) when the install fails
 */
export async function ensureToolLayer(
  docker: Docker,
  images: ImageService,
  baseImage: string,
  tool: ToolInstall,
  options: { jobId: string; onLog?: (line: string) => void; signal?: AbortSignal },
): Promise<{ image: string; record: ToolInstallRecord }> {
  const started = performance.now();
  const log: string[] = [];
  const note = (line: string): void => {
    log.push(line);
    options.onLog?.(line);
  };
  const base = await docker.getImage(baseImage).inspect();
  const tag = toolLayerTag(tool, base.Id);
  const home = toolHome(tool);
  const cached = await docker
    .getImage(tag)
    .inspect()
    .catch(() => undefined);
  const seconds = () => Math.round(performance.now() - started) / 1000;
  if (cached) {
    const [arch, libc] = (cached.Config?.Labels?.[PLATFORM_LABEL] ?? 'x64-glibc').split('-');
    note(`${tool.name} ${tool.version}: using the cached layer ${tag}`);
    return {
      image: tag,
      record: {
        home,
        platform: { arch: arch as Platform['arch'], libc: libc as Platform['libc'] },
        installed: false,
        durationSec: seconds(),
        log,
      },
    };
  }
  const platform: Platform = {
    arch: archOf(base.Architecture),
    libc: await libcOf(docker, base.Id, options.jobId),
  };
  note(
    `${tool.name} ${tool.version}: task image ${baseImage} (${base.Id.slice(7, 19)}) is linux-${platform.arch}-${platform.libc}`,
  );
  const { folder } = await tool.prepare(platform, note);
  const dockerfile = [
    `FROM ${base.Id}`,
    `COPY . ${home}/`,
    `LABEL ${PLATFORM_LABEL}=${platform.arch}-${platform.libc} dev.berth.tool=${tool.name}-${tool.version}`,
    '',
  ].join('\n');
  note(`building the layer ${tag}`);
  await images.buildTagged(
    {
      contextDir: folder,
      name: `${tool.name}-${tool.version}`,
      timeoutSec: 900,
      onLog: note,
      ...(options.signal ? { signal: options.signal } : {}),
    },
    dockerfile,
    tag,
    `${tool.name}@${tool.version}@${base.Id}`,
  );
  note(`installed ${tool.name} ${tool.version} in ${seconds()} s`);
  return { image: tag, record: { home, platform, installed: true, durationSec: seconds(), log } };
}
