/**
 * Images for Docker environments: build a task's image from its context
 * (cached across trials and jobs by a content hash of the context), make the
 * images its Dockerfile needs available (explicit `--image-map`, a local
 * image, a dataset base built on demand in dependency order, the `*` map), and
 * never pull: air-gapped machines have no registry.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type Docker from 'dockerode';
import { execa } from 'execa';
import { BerthError, InputError, UsageError } from '../../errors.ts';
import { ownedTempDir } from '../../util/leftovers.ts';
import {
  type BaseImage,
  ImageMap,
  imagesOfDockerfile,
  normalizeImage,
  orderBases,
  readBasesManifest,
  rewriteDockerfile,
} from './dockerfile.ts';
import { ImageArchiveError, loadArchiveFor, missingImageHint } from './image-archives.ts';
import { LABELS } from './labels.ts';

/**
 * An image that could not be made: a build that failed or an image that is missing (named
 * `SandboxBuildFailedError`, as Harbor's docs name a failed environment build), or a build that
 * passed its timeout (`EnvironmentStartTimeoutError`, Harbor's error for an environment start
 * over `build_timeout_sec`). The error's `name` is that name: it is the trial's `exception_type`.
 */
export class ImageBuildError extends BerthError {
  readonly exceptionType: 'SandboxBuildFailedError' | 'EnvironmentStartTimeoutError';
  readonly log: string;
  constructor(
    message: string,
    log: string,
    exceptionType: 'SandboxBuildFailedError' | 'EnvironmentStartTimeoutError' = 'SandboxBuildFailedError',
  ) {
    super('BERTH_IMAGE_BUILD', message);
    this.name = exceptionType;
    this.exceptionType = exceptionType;
    this.log = log;
  }
}

export interface BuildRequest {
  /** Build context folder. */
  contextDir: string;
  /** Dockerfile name inside the context (default `Dockerfile`). */
  dockerfile?: string;
  /** Name used in the cache tag (`berth-cache/<name>:<hash>`). */
  name: string;
  /** Extra tags to give the built image (a compose `main.image`, a base's name). */
  tags?: string[];
  /** Build timeout in seconds. */
  timeoutSec?: number;
  /** Receives build output lines. */
  onLog?: (line: string) => void;
  signal?: AbortSignal;
  /** Dataset base images available to build on demand. */
  bases?: BaseImage[];
  /**
   * The task's image archive (the multilingual demo's `tar_path`): loaded when an image the
   * task needs is missing and the archive holds it (image-archives.ts). `file` is undefined
   * when none of `candidates` exists.
   */
  archive?: { tarPath: string; file?: string; candidates: string[] };
  /** Build even when the cache tag exists, without Docker's layer cache (a forced base build). */
  force?: boolean;
}

export interface ImageServiceOptions {
  imageMap?: ImageMap;
  /** Job id put on images built by this job. */
  jobId?: string;
  /** Rebuild even when the cache tag exists. */
  rebuild?: boolean;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/** sha256 of a context: every file's relative path, executable bit and content, plus `extra`. */
export async function hashContext(dir: string, extra: string): Promise<string> {
  const h = createHash('sha256');
  for (const file of await listFiles(dir)) {
    const s = await stat(file);
    h.update(`${relative(dir, file)}\0${s.mode & 0o111 ? 'x' : '-'}\0`);
    if (s.isFile()) h.update(await readFile(file));
    h.update('\0');
  }
  h.update(extra);
  return h.digest('hex');
}

/** Builds and finds images on one engine. One instance per job; builds of the same tag are shared. */
export class ImageService {
  private readonly inflight = new Map<string, Promise<string>>();
  readonly imageMap: ImageMap;

  constructor(
    private readonly docker: Docker,
    private readonly options: ImageServiceOptions = {},
  ) {
    this.imageMap = options.imageMap ?? new ImageMap();
  }

  async exists(image: string): Promise<boolean> {
    try {
      await this.docker.getImage(image).inspect();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Makes `image` usable as a build or run image and returns the name to use:
   * its explicit mapping, itself when present locally, a dataset base built now,
   * or the `*` mapping.
   * @throws ImageBuildError naming the image when none of these applies (nothing is pulled)
   */
  async provide(
    image: string,
    request: Pick<BuildRequest, 'bases' | 'onLog' | 'signal' | 'timeoutSec' | 'archive'>,
  ): Promise<string> {
    const mapped = this.imageMap.explicit(image);
    if (mapped) return mapped;
    const base = request.bases?.find((b) => normalizeImage(b.image) === normalizeImage(image));
    if (base && this.options.rebuild) return this.buildBase(base, request);
    if (await this.exists(image)) return image;
    if (base) return this.buildBase(base, request);
    let archiveNote = '';
    if (request.archive?.file) {
      const file = request.archive.file;
      const key = `archive:${file}\0${normalizeImage(image)}`;
      let p = this.inflight.get(key);
      if (!p) {
        p = loadArchiveFor(this.docker, file, image, (i) => this.exists(i), request.onLog).then(() => image);
        this.inflight.set(key, p);
        p.catch(() => this.inflight.delete(key));
      }
      try {
        return await p;
      } catch (error) {
        if (!(error instanceof ImageArchiveError)) throw error;
        archiveNote = `; the task's archive was not loaded: ${error.message}`;
      }
    } else if (request.archive)
      archiveNote = `; the task's tar_path ${request.archive.tarPath} is in none of ${request.archive.candidates.join(', ')} (put it there or pass --images-dir DIR)`;
    if (this.imageMap.fallback) return this.imageMap.fallback;
    throw new ImageBuildError(
      `image ${image} is not available locally and berth does not pull images${archiveNote}; ${missingImageHint(image)}`,
      '',
    );
  }

  /** Builds a dataset base image (`bases/<repo>/Dockerfile.<tag>`) under its own name, after the bases it needs. */
  buildBase(
    base: BaseImage,
    request: Pick<BuildRequest, 'bases' | 'onLog' | 'signal' | 'timeoutSec'>,
  ): Promise<string> {
    const key = `base:${base.image}`;
    let p = this.inflight.get(key);
    if (!p) {
      p = (async () => {
        request.onLog?.(`base image ${base.image} needed: building ${base.repo}/${base.dockerfile}`);
        await this.build({
          contextDir: base.contextDir,
          dockerfile: base.dockerfile,
          name: `base-${base.repo}-${base.tag}`,
          tags: [base.image],
          bases: request.bases,
          onLog: request.onLog,
          signal: request.signal,
          timeoutSec: request.timeoutSec,
        });
        request.onLog?.(`built base image ${base.image}`);
        return base.image;
      })();
      this.inflight.set(key, p);
      p.catch(() => this.inflight.delete(key));
    }
    return p;
  }

  /**
   * Builds a dataset's bases in dependency order, as the Kotlin Benchmark's
   * `scripts/build_bases.sh` does: a base that exists is skipped, unless forced.
   * @param opts.only bases to build (`repo`, `repo:tag` or the image name), with the bases they
   *   build FROM when those are missing; default every base of the manifest
   * @param opts.force rebuild the chosen bases even when they exist, without Docker's layer
   *   cache (Harbor's `--force-build`); the service's `rebuild` option does the same
   * @returns each base considered, built or found
   * @throws UsageError when a name in `only` is not a base of the manifest
   */
  async buildAllBases(
    basesDir: string,
    opts: { onLog?: (line: string) => void; timeoutSec?: number; only?: string[]; force?: boolean } = {},
  ): Promise<Array<{ image: string; built: boolean }>> {
    const bases = orderBases(readBasesManifest(basesDir));
    const chosen = opts.only?.length
      ? new Set(opts.only.flatMap((name) => basesNamed(bases, name)))
      : new Set(bases);
    // What a chosen base builds FROM (other bases of the manifest), transitively.
    const needed = new Set<BaseImage>(chosen);
    for (const base of [...bases].reverse()) {
      if (!needed.has(base)) continue;
      const text = await readFile(join(base.contextDir, base.dockerfile), 'utf8');
      for (const ref of imagesOfDockerfile(text)) {
        const dep = bases.find((b) => normalizeImage(b.image) === normalizeImage(ref.image));
        if (dep) needed.add(dep);
      }
    }
    const out: Array<{ image: string; built: boolean }> = [];
    for (const base of bases) {
      if (!needed.has(base)) continue;
      const forced = (opts.force || this.options.rebuild) && chosen.has(base);
      const present = !forced && (await this.exists(base.image));
      if (!present) {
        opts.onLog?.(`base image ${base.image}: building ${base.repo}/${base.dockerfile}`);
        await this.build({
          contextDir: base.contextDir,
          dockerfile: base.dockerfile,
          name: `base-${base.repo}-${base.tag}`,
          tags: [base.image],
          bases,
          ...(opts.onLog ? { onLog: opts.onLog } : {}),
          ...(opts.timeoutSec !== undefined ? { timeoutSec: opts.timeoutSec } : {}),
          ...(forced ? { force: true } : {}),
        });
        opts.onLog?.(`built base image ${base.image}`);
      }
      out.push({ image: base.image, built: !present });
    }
    return out;
  }

  /**
   * Builds a context, resolving its FROM images first; cached by the content
   * hash of the context and the rewritten Dockerfile. Returns the cache tag.
   * @throws ImageBuildError with the build log on failure or timeout
   */
  async build(request: BuildRequest): Promise<string> {
    const dockerfileName = request.dockerfile ?? 'Dockerfile';
    const dockerfilePath = join(request.contextDir, dockerfileName);
    let text: string;
    try {
      text = await readFile(dockerfilePath, 'utf8');
    } catch {
      throw new InputError({ file: dockerfilePath }, 'missing Dockerfile');
    }
    const resolved = new Map<string, string>();
    for (const ref of imagesOfDockerfile(text)) {
      if (!resolved.has(ref.image)) resolved.set(ref.image, await this.provide(ref.image, request));
    }
    const rewritten = rewriteDockerfile(text, (image) => resolved.get(image) ?? image);
    const hash = await hashContext(request.contextDir, `${dockerfileName}\0${rewritten}`);
    const safeName =
      request.name
        .toLowerCase()
        .replace(/[^a-z0-9_.-]/g, '-')
        .replace(/^[^a-z0-9]+/, '') || 'task';
    const cacheTag = `berth-cache/${safeName}:${hash.slice(0, 16)}`;
    const key = `build:${cacheTag}`;
    let p = this.inflight.get(key);
    if (!p) {
      p = this.buildUncached(request, rewritten, cacheTag, hash);
      this.inflight.set(key, p);
      p.catch(() => this.inflight.delete(key));
    }
    await p;
    for (const tag of request.tags ?? []) await this.tag(cacheTag, tag);
    return cacheTag;
  }

  /**
   * Builds `dockerfile` (its text) over `request.contextDir` under `tag`, unless that tag
   * exists: the caller's tag is the cache key (`key`, recorded as the context-hash label), so
   * the context is not hashed (an installed agent's layer: src/environments/docker/tool-layer.ts).
   * @throws ImageBuildError with the build log on failure or timeout
   */
  buildTagged(request: BuildRequest, dockerfile: string, tag: string, key: string): Promise<string> {
    const inflightKey = `build:${tag}`;
    let p = this.inflight.get(inflightKey);
    if (!p) {
      p = this.buildUncached(request, dockerfile, tag, key);
      this.inflight.set(inflightKey, p);
      p.catch(() => this.inflight.delete(inflightKey));
    }
    return p;
  }

  private async tag(source: string, target: string): Promise<void> {
    const i = target.lastIndexOf(':');
    const hasTag = i > target.lastIndexOf('/');
    await this.docker
      .getImage(source)
      .tag({ repo: hasTag ? target.slice(0, i) : target, tag: hasTag ? target.slice(i + 1) : 'latest' });
  }

  private async buildUncached(
    request: BuildRequest,
    dockerfile: string,
    cacheTag: string,
    hash: string,
  ): Promise<string> {
    if (!this.options.rebuild && !request.force && (await this.exists(cacheTag))) {
      request.onLog?.(`using cached image ${cacheTag}`);
      return cacheTag;
    }
    const tmp = await ownedTempDir('berth-build-');
    const log: string[] = [];
    const onLine = (line: string): void => {
      log.push(line);
      if (log.length > 2000) log.shift();
      request.onLog?.(line);
    };
    const controller = new AbortController();
    const timeoutSec = request.timeoutSec;
    let timedOut = false;
    const timer = timeoutSec
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutSec * 1000)
      : undefined;
    const onAbort = (): void => controller.abort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await writeFile(join(tmp, '.berth.Dockerfile'), dockerfile);
      // The context as a tar stream, with the rewritten Dockerfile added beside it.
      const tar = execa('tar', ['-c', '-C', request.contextDir, '.', '-C', tmp, '.berth.Dockerfile'], {
        buffer: false,
        stderr: 'pipe',
      });
      const labels: Record<string, string> = { [LABELS.managed]: '1', [LABELS.contextHash]: hash };
      if (this.options.jobId) labels[LABELS.job] = this.options.jobId;
      const stream = await this.docker.buildImage(
        tar.stdout as NodeJS.ReadableStream,
        {
          t: cacheTag,
          dockerfile: '.berth.Dockerfile',
          labels,
          rm: true,
          forcerm: true,
          ...(request.force ? { nocache: true } : {}),
          abortSignal: controller.signal,
        } as Docker.ImageBuildOptions,
      );
      await new Promise<void>((resolve, reject) => {
        this.docker.modem.followProgress(
          stream,
          (error: Error | null) => (error ? reject(error) : resolve()),
          (event: {
            stream?: string;
            error?: string;
            errorDetail?: { message?: string };
            status?: string;
          }) => {
            if (event.stream) for (const l of event.stream.split('\n')) if (l.trim()) onLine(l);
            if (event.status) onLine(event.status);
            if (event.error) reject(new Error(event.errorDetail?.message ?? event.error));
          },
        );
      });
      await tar.catch(() => undefined);
      if (!(await this.exists(cacheTag)))
        throw new Error('the engine reported no error but the image is missing');
      return cacheTag;
    } catch (error) {
      if (timedOut) {
        throw new ImageBuildError(
          `building ${request.name} passed its timeout of ${timeoutSec} s`,
          log.join('\n'),
          'EnvironmentStartTimeoutError',
        );
      }
      const tail = log.slice(-15).join('\n');
      throw new ImageBuildError(
        `building ${request.name} failed: ${(error as Error).message}${tail ? `\n${tail}` : ''}`,
        log.join('\n'),
      );
    } finally {
      if (timer) clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

/**
 * The bases `name` means: `repo` (every variant of it), `repo:tag`, or an image name.
 * @throws UsageError naming the bases there are when none matches
 */
export function basesNamed(bases: BaseImage[], name: string): BaseImage[] {
  const found = bases.filter(
    (b) =>
      b.repo === name || `${b.repo}:${b.tag}` === name || normalizeImage(b.image) === normalizeImage(name),
  );
  if (found.length === 0)
    throw new UsageError(
      `${name} is not a base of the manifest (bases: ${bases.map((b) => `${b.repo}:${b.tag}`).join(', ')})`,
    );
  return found;
}
