/**
 * An image's VOLUME paths, each covered by a capped tmpfs of berth's (issue 10, volume12).
 *
 * The engine would give each VOLUME path an anonymous volume: a host folder under its data root,
 * bound writable, in no container diff and in no disk limit (breaker10 F6). A mount berth names at
 * that path replaces it (the engine makes no volume where the container already has a mount), so
 * berth mounts a tmpfs there: capped (`size`, and its pages count against the container's memory
 * limit), `nosuid,nodev`, `noexec` unless the image keeps an executable file there, with the
 * image's owner and mode of the folder (postgres wants its data folder its own, 0700 or 0750).
 * The image's files there are read once a process from a created, never started container (the
 * engine reads the image's layer under a tmpfs that is not mounted) and copied in by the image's
 * own `tar`, as root, right after the container starts, before any command of a trial.
 *
 * What a tmpfs holds is still in no record of changes: a verifier never runs in a container with
 * one after an agent (verifier-environment.ts), and a path whose unrecorded writes could change
 * what berth or a verifier runs is refused (`unrecordedPlaceRefusal`).
 */
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { extract as tarExtract } from 'tar-stream';
import { BerthError } from '../../errors.ts';
import { shellQuote } from '../../util/shell.ts';
import { COPY_TIMEOUT_SEC } from '../environment.ts';

/** The image's folder at one VOLUME path, as berth's tmpfs there reproduces it. */
export interface VolumeDir {
  /** The VOLUME path (normalized). */
  path: string;
  /** Permission bits of the image's folder there (with set-id and sticky bits); 0755 when it has none. */
  mode: number;
  uid: number;
  gid: number;
  /** A regular file there has an execute bit: the tmpfs is mounted without `noexec`. */
  exec: boolean;
  /** The engine's tar stream of the path (entries named `<basename>/...`) when the folder holds files. */
  archive?: Buffer;
}

/** The most bytes of the image's own files at one VOLUME path berth copies into its tmpfs. */
export const VOLUME_CONTENT_BYTES = 64 * 1024 * 1024;

/** A VOLUME path that cannot be made safe: refused before the trial's container is made. */
export function volumeRefusal(where: string, path: string, why: string): BerthError {
  return new BerthError('BERTH_IMAGE_VOLUME', `${where} declares VOLUME ${path}: refused, as ${why}`);
}

const probeCache = new Map<string, Promise<VolumeDir[]>>();

/**
 * The image's folders at `paths` (`VolumeDir`), read once a process from a container that is
 * created, never started, and removed (it has the same tmpfs mounts, so the engine makes no
 * volume for it either).
 * @param where names the task, the image and the file it comes from, for a refusal
 * @throws BerthError BERTH_IMAGE_VOLUME when a path is a file or a link in the image, or holds
 *   more than `VOLUME_CONTENT_BYTES`
 */
export function imageVolumeDirs(
  docker: Docker,
  image: string,
  paths: readonly string[],
  labels: Record<string, string>,
  where: string,
): Promise<VolumeDir[]> {
  const key = `${image}\0${paths.join('\0')}`;
  let p = probeCache.get(key);
  if (!p) {
    p = probe(docker, image, paths, labels, where);
    probeCache.set(key, p);
    p.catch(() => probeCache.delete(key));
  }
  return p;
}

async function probe(
  docker: Docker,
  image: string,
  paths: readonly string[],
  labels: Record<string, string>,
  where: string,
): Promise<VolumeDir[]> {
  const container = await docker.createContainer({
    Image: image,
    Cmd: ['true'],
    Labels: labels,
    HostConfig: {
      NetworkMode: 'none',
      AutoRemove: false,
      Tmpfs: Object.fromEntries(paths.map((p) => [p, 'size=1m'])),
    },
  });
  try {
    const dirs: VolumeDir[] = [];
    for (const path of paths) dirs.push(await readDir(container, path, where));
    return dirs;
  } finally {
    await container.remove({ force: true, v: true }).catch(() => undefined);
  }
}

async function readDir(container: Docker.Container, path: string, where: string): Promise<VolumeDir> {
  let stream: Readable;
  try {
    // Bounded in time as every copy out of a container (the engine walks the folder first).
    stream = (await container.getArchive({
      path,
      abortSignal: AbortSignal.timeout(COPY_TIMEOUT_SEC * 1000),
    })) as Readable;
  } catch (error) {
    // The image has nothing there: the engine would make a root folder 0755.
    if ((error as { statusCode?: number }).statusCode === 404)
      return { path, mode: 0o755, uid: 0, gid: 0, exec: false };
    throw error;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > VOLUME_CONTENT_BYTES) {
      stream.destroy();
      throw volumeRefusal(
        where,
        path,
        `the image keeps more than ${VOLUME_CONTENT_BYTES / 1024 / 1024} MiB there, which berth does not copy into its tmpfs`,
      );
    }
    chunks.push(chunk);
  }
  const archive = Buffer.concat(chunks);
  const entries = await tarHeaders(archive);
  const top = entries[0];
  if (top?.type !== 'directory')
    throw volumeRefusal(
      where,
      path,
      `it is ${top ? `a ${top.type}` : 'nothing readable'} in the image, not a folder berth can cover with a tmpfs`,
    );
  return {
    path,
    mode: (top.mode ?? 0o755) & 0o7777,
    uid: top.uid ?? 0,
    gid: top.gid ?? 0,
    exec: entries.some((e) => e.type === 'file' && ((e.mode ?? 0) & 0o111) !== 0),
    ...(entries.length > 1 ? { archive } : {}),
  };
}

type Header = { type: string; mode?: number; uid?: number; gid?: number };

/** The headers of a tar archive held in memory, in order. */
async function tarHeaders(archive: Buffer): Promise<Header[]> {
  const headers: Header[] = [];
  const extract = tarExtract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, entry, next) => {
      headers.push({
        type: header.type ?? 'file',
        ...(header.mode !== undefined ? { mode: header.mode } : {}),
        ...(header.uid !== undefined ? { uid: header.uid } : {}),
        ...(header.gid !== undefined ? { gid: header.gid } : {}),
      });
      entry.on('end', next);
      entry.resume();
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(archive);
  await done;
  return headers;
}

/**
 * The engine's tmpfs options of `dir`, capped at `sizeBytes` (rounded up to a MiB): the image's
 * owner and mode, `nosuid,nodev`, and `noexec` unless the image keeps an executable file there.
 */
export function tmpfsOptions(dir: VolumeDir, sizeBytes: number): string {
  const mib = Math.max(1, Math.ceil(sizeBytes / (1024 * 1024)));
  return [
    'rw',
    'nosuid',
    'nodev',
    dir.exec ? 'exec' : 'noexec',
    `size=${mib}m`,
    `mode=${dir.mode.toString(8)}`,
    `uid=${dir.uid}`,
    `gid=${dir.gid}`,
  ].join(',');
}

/** The command (as root, cwd /) that extracts the image's files of `dir` from standard input into its tmpfs. */
export function fillCommand(dir: VolumeDir): string {
  const parent = posix.dirname(dir.path);
  return `tar -x -p --numeric-owner -f - -C ${shellQuote(parent)}`;
}
