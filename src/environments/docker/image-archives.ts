/**
 * Image archives (`docker save` tars) a dataset ships beside its tasks: the multilingual demo's
 * `sample_images/<owner>__<repo>.tar`, named by each task's `tar_path` in `sample_task.json`.
 * The demo's README says to `docker load -i` them before running; berth loads the archive
 * itself when an image the task needs is missing, so the seed's command lines run as written.
 *
 * An archive is data from the dataset, not trusted: before loading, its `manifest.json` is read
 * and the archive is refused when it holds any other repository than the missing image's, or
 * berth's own names (`berth-*`), or would replace an image the engine already has (a tar that
 * retags `berth-base:bookworm`, an agent layer or another task's image would change what other
 * trials run).
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type Docker from 'dockerode';
import { extract } from 'tar-stream';
import { normalizeImage } from './dockerfile.ts';

/**
 * Where a task's image archive is named (`tar_path`) and where to look for it.
 * Resolved by {@link archiveCandidates}.
 */
export interface ImageArchiveRef {
  /** The task's `tar_path` as written (a file name, or a path). */
  tarPath: string;
  /** The dataset folder (the one holding `sample_task.json`). */
  datasetDir: string;
}

/** The folder the demo keeps its archives in, beside the tasks. */
export const DEFAULT_IMAGES_DIR = 'sample_images';

/**
 * The files `ref` may be, in order: an absolute `tar_path` itself; else `tar_path` and its file
 * name inside the images folder (`--images-dir`, default `<dataset>/sample_images`); then
 * `tar_path` against the dataset folder.
 */
export function archiveCandidates(ref: ImageArchiveRef, imagesDir?: string): string[] {
  if (isAbsolute(ref.tarPath)) return [ref.tarPath];
  const dir = imagesDir ?? join(ref.datasetDir, DEFAULT_IMAGES_DIR);
  return [
    ...new Set([join(dir, ref.tarPath), join(dir, basename(ref.tarPath)), join(ref.datasetDir, ref.tarPath)]),
  ];
}

/** The first candidate that is a file, or undefined. */
export function findArchive(ref: ImageArchiveRef, imagesDir?: string): string | undefined {
  return archiveCandidates(ref, imagesDir).find((file) => existsSync(file) && statSync(file).isFile());
}

/**
 * The image names (`RepoTags`, normalised) a `docker save` archive holds, read from its
 * `manifest.json` (plain or gzip-compressed tar).
 * @throws Error when the file is not such an archive
 */
export async function archiveTags(file: string): Promise<string[]> {
  const head = Buffer.alloc(2);
  const fd = await import('node:fs/promises').then((fs) => fs.open(file, 'r'));
  try {
    await fd.read(head, 0, 2, 0);
  } finally {
    await fd.close();
  }
  const gzip = head[0] === 0x1f && head[1] === 0x8b;
  let manifest: string | undefined;
  const reader = extract();
  reader.on('entry', (header, stream, next) => {
    if (
      header.name.replace(/^\.\//, '') === 'manifest.json' &&
      header.size !== undefined &&
      header.size < 1 << 20
    ) {
      const parts: Buffer[] = [];
      stream.on('data', (b: Buffer) => parts.push(b));
      stream.on('end', () => {
        manifest = Buffer.concat(parts).toString('utf8');
        next();
      });
    } else {
      stream.on('end', () => next());
      stream.resume();
    }
  });
  const source = createReadStream(file);
  await (gzip ? pipeline(source, createGunzip(), reader) : pipeline(source, reader));
  if (manifest === undefined) throw new Error(`${file} is not a docker save archive (no manifest.json)`);
  let entries: unknown;
  try {
    entries = JSON.parse(manifest);
  } catch {
    throw new Error(`${file}: manifest.json is not JSON`);
  }
  if (!Array.isArray(entries)) throw new Error(`${file}: manifest.json is not a list`);
  return entries.flatMap((e) =>
    Array.isArray((e as { RepoTags?: unknown }).RepoTags)
      ? ((e as { RepoTags: unknown[] }).RepoTags.filter((t) => typeof t === 'string') as string[]).map(
          normalizeImage,
        )
      : [],
  );
}

/** Why an archive was not loaded (berth's message names the file and what to do). */
export class ImageArchiveError extends Error {
  override name = 'ImageArchiveError';
}

/**
 * Loads `file` into the engine so that `image` exists.
 * @param exists whether the engine has an image
 * @throws ImageArchiveError when the archive does not hold `image`, or would replace an image
 *   the engine has
 */
export async function loadArchiveFor(
  docker: Docker,
  file: string,
  image: string,
  exists: (image: string) => Promise<boolean>,
  onLog?: (line: string) => void,
): Promise<void> {
  const tags = await archiveTags(file).catch((error: Error) => {
    throw new ImageArchiveError(error.message);
  });
  if (!tags.includes(normalizeImage(image)))
    throw new ImageArchiveError(
      `${file} holds ${tags.length ? tags.join(', ') : 'no tagged image'}, not ${image}`,
    );
  // Only the image asked for (any tag of its repository): an archive that also tags another
  // repository would plant it for later tasks (an `ubuntu:24.04` every later FROM would use), or
  // berth's own images (`berth-agent/*` installed-agent layers, `berth-cache/*`, the base images).
  const repository = (tag: string) => tag.slice(0, tag.lastIndexOf(':'));
  const foreign = tags.filter(
    (tag) => repository(tag) !== repository(normalizeImage(image)) || /^berth[-/]/.test(tag),
  );
  if (foreign.length > 0)
    throw new ImageArchiveError(
      `${file} also holds ${foreign.join(', ')}: berth loads an archive only when it holds nothing but ${image} (docker load -i it yourself if you trust it)`,
    );
  const present: string[] = [];
  for (const tag of tags) if (await exists(tag)) present.push(tag);
  if (present.length > 0)
    throw new ImageArchiveError(
      `${file} would replace ${present.join(', ')}, which the engine has already; berth does not load it (docker load -i it yourself if that is what you want)`,
    );
  onLog?.(`loading ${image} from ${file}`);
  const stream = await docker.loadImage(createReadStream(file), { quiet: true });
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(
      stream,
      (error: Error | null) => (error ? reject(error) : resolve()),
      (event: { stream?: string; error?: string }) => {
        if (event.error) reject(new ImageArchiveError(`${file}: ${event.error}`));
        else if (event.stream?.trim()) onLog?.(event.stream.trim());
      },
    ),
  );
  if (!(await exists(image))) throw new ImageArchiveError(`${file} was loaded but ${image} is not there`);
}

/** The image the bundled multilingual examples build on (examples/multilingual/image/build-image.sh). */
export const MULTILINGUAL_BASE_IMAGE = 'berth-multilingual:bookworm';

/** What to do about a missing image, in one sentence (`berth check`, the build error). */
export function missingImageHint(image: string): string {
  if (normalizeImage(image) === MULTILINGUAL_BASE_IMAGE)
    return 'build it with examples/multilingual/image/build-image.sh (about 3 minutes, Debian packages only), or map it onto a local image with --image-map';
  return `build it, load it (docker load -i FILE.tar), or map it onto a local image with --image-map ${image}=<local image>`;
}
