/**
 * A trial spec as it travels over the queue: no host path in it (issue 16). The submitter
 * packs every host folder or file the spec names (a Harbor task's folder and shared bases,
 * a predictions file, git mirrors) into a content-addressed blob and writes
 * `berth-blob:<sha256>[/rest]` in place of the path; a worker fetches what it lacks into its
 * cache, unpacks each blob once under its own root, and writes its own paths back.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { tarPath } from '../environments/docker/tar.ts';
import type { Task } from '../tasks/task.ts';
import type { TrialSpec } from '../trials/spec.ts';
import { type BlobCache, type BlobStore, unpackBlob } from './blobs.ts';

/** How a host path is written in a queued spec: `berth-blob:<sha256>` then the path inside it. */
export const BLOB_SCHEME = 'berth-blob:';
const BLOB_REF = /^berth-blob:([0-9a-f]{64})(\/.*)?$/;

/** Every string of a JSON value passed through `map` (objects and arrays copied). */
function mapStrings(value: unknown, map: (s: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)]));
  return value;
}

function eachString(value: unknown, visit: (s: string) => void): void {
  mapStrings(value, (s) => {
    visit(s);
    return s;
  });
}

const under = (path: string, root: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The host paths a value names, as the fewest folders or files that hold them all. A string is
 * a host path when it is absolute, exists here, and lies under one of `allowed` (the dataset's
 * folder, shared bases): a task's `/app` or `/tmp` is a path inside its container, never packed.
 */
export function hostRoots(value: unknown, allowed: readonly string[]): string[] {
  const found = new Set<string>();
  eachString(value, (s) => {
    if (isAbsolute(s) && !s.startsWith(BLOB_SCHEME) && allowed.some((a) => under(resolve(s), a)) && exists(s))
      found.add(resolve(s));
  });
  const roots: string[] = [];
  for (const path of [...found].sort((a, b) => a.length - b.length))
    if (!roots.some((root) => under(path, root))) roots.push(path);
  return roots;
}

/** Writes each path under one of `roots` as `berth-blob:<sha>/rest`. */
function toRefs(value: unknown, packed: ReadonlyMap<string, string>): unknown {
  return mapStrings(value, (s) => {
    if (!isAbsolute(s)) return s;
    const path = resolve(s);
    for (const [root, sha] of packed)
      if (under(path, root)) return `${BLOB_SCHEME}${sha}${path.slice(root.length).split(sep).join('/')}`;
    return s;
  });
}

/** What the submitter keeps of what it packed: host path -> blob sha, so a folder is packed once. */
export type PackedRoots = Map<string, Promise<string>>;

/**
 * The spec as it goes on the queue: the task inline with its host paths as blob references
 * (`TaskRef.load.kind` stays `inline`; its `origin.file` becomes the file's base name), the
 * agent's and environment's host paths likewise, `tmpRoot` and `config` dropped (a worker
 * uses its own folders; the job's options stay with the submitter).
 * @param datasetPath the dataset the task was loaded from: only paths beneath it (and a
 *   Harbor dataset's shared `bases/`) are packed.
 * @throws BlobTooLargeError when a folder is over the queue's cap.
 */
export async function specForQueue(
  spec: TrialSpec,
  task: Task,
  datasetPath: string,
  store: BlobStore,
  packed: PackedRoots,
): Promise<TrialSpec> {
  const dataset = resolve(datasetPath);
  const datasetRoot = existsSync(dataset) && lstatSync(dataset).isDirectory() ? dataset : dirname(dataset);
  const bases = (task.environment as { basesDir?: unknown }).basesDir;
  const allowed = [datasetRoot, ...(typeof bases === 'string' ? [resolve(bases)] : [])];
  const { origin, ...rest } = task;
  const { tmpRoot: _tmpRoot, ...environment } = spec.environment;
  // The options that name the user's own files (a predictions file, folders, git mirrors).
  const o = spec.agent.options as { predictionsFile?: unknown; agentMounts?: unknown };
  const optionRoots = hostRoots([o.predictionsFile, o.agentMounts, environment.reposDir], ['/']);
  const taskRoots = hostRoots(rest, allowed);
  const shas = new Map<string, string>();
  for (const root of [...taskRoots, ...optionRoots]) {
    let sha = packed.get(root);
    if (!sha) {
      sha = tarPath(root, 'content', { mtime: 0 }).then((bytes) =>
        store.put(bytes, `${spec.task.name}: ${root}`),
      );
      packed.set(root, sha);
      sha.catch(() => packed.delete(root));
    }
    shas.set(root, await sha);
  }
  const queuedTask = {
    ...(toRefs(rest, shas) as Omit<Task, 'origin'>),
    origin: { file: basename(origin.file), ...(origin.line !== undefined ? { line: origin.line } : {}) },
  } as Task;
  return {
    ...spec,
    task: { ...spec.task, load: { kind: 'inline', task: queuedTask } },
    agent: { ...spec.agent, options: toRefs(spec.agent.options, shas) as TrialSpec['agent']['options'] },
    environment: toRefs(environment, shas) as TrialSpec['environment'],
    // The job's options as the submitter recorded them (its paths): the submitter writes the
    // job's config.json; the engine does not read them.
    config: {},
  };
}

/** The blob references of a value, as sha256 hashes. */
export function blobRefs(value: unknown): string[] {
  const shas = new Set<string>();
  eachString(value, (s) => {
    const m = BLOB_REF.exec(s);
    if (m?.[1]) shas.add(m[1]);
  });
  return [...shas];
}

/**
 * A worker's side: each blob a spec names unpacked once under `contentDir/<sha>` (fetched
 * into the cache when missing), and the spec with its references replaced by those paths.
 * @throws Error for a reference that leaves its blob (`..`) or a blob the queue lost.
 */
export async function materializeSpec(
  spec: TrialSpec,
  cache: BlobCache,
  contentDir: string,
): Promise<TrialSpec> {
  const local = new Map<string, string>();
  for (const sha of blobRefs(spec)) {
    const dir = join(contentDir, sha);
    if (!existsSync(dir)) {
      const bytes = await cache.get(sha);
      await mkdir(contentDir, { recursive: true });
      const temp = join(contentDir, `.${sha}.${randomUUID()}`);
      try {
        await unpackBlob(bytes, temp);
        await rename(temp, dir).catch(async (error: NodeJS.ErrnoException) => {
          // Another trial of this worker unpacked it first.
          if (!existsSync(dir)) throw error;
          await rm(temp, { recursive: true, force: true });
        });
      } catch (error) {
        await rm(temp, { recursive: true, force: true });
        throw error;
      }
    }
    local.set(sha, dir);
  }
  return mapStrings(spec, (s) => {
    const m = BLOB_REF.exec(s);
    if (!m?.[1]) return s;
    const inner = m[2] ?? '';
    if (inner.split('/').some((part) => part === '..'))
      throw new Error(`blob reference ${JSON.stringify(s.slice(0, 120))} leaves its blob`);
    return `${local.get(m[1])}${inner}`;
  }) as TrialSpec;
}
