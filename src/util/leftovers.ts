/**
 * Temp folders berth makes on the host (a local environment's root, possibly a tmpfs mount;
 * the model gateway's socket folder; a build context; a merged tests folder), recorded under
 * their owner (src/util/owner.ts) so that what a killed berth process left is found and
 * removed later: by the next `berth run` (`reclaimLeftovers`) and by `berth clean`.
 *
 * The record is one file per owner, `<temp folder>/berth-owners/<owner>.jsonl` (a line per folder:
 * `{"owner","path","job"?}`), appended when the folder is made. At a normal exit the file goes
 * when every folder in it is gone; a folder whose owner is alive is never touched.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { releaseFolder } from '../sandbox/capped-folder.ts';
import { ownerAlive, ownerId } from './owner.ts';

/** One recorded folder. */
interface Entry {
  owner: string;
  path: string;
  job?: string;
}

/** Where owners' records live: `<temp folder>/berth-owners`, beside the folders they list. */
export function ownersDir(): string {
  return join(tmpdir(), 'berth-owners');
}

const fileOf = (owner: string) => join(ownersDir(), `${owner.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);

/** Files this process recorded into (one per owner id it had), removed at exit when empty of live folders. */
const mine = new Map<string, string[]>();
let exitHook = false;

/**
 * Records `path` (an absolute folder whose name starts with `berth-`) as owned by this process,
 * for `job` when given. Synchronous: recorded before anything is put into the folder.
 */
export function recordLeftover(path: string, job?: string): void {
  if (!isAbsolute(path) || !basename(path).startsWith('berth-'))
    throw new Error(`not a berth temp folder: ${path}`);
  const owner = ownerId();
  const file = fileOf(owner);
  mkdirSync(ownersDir(), { recursive: true });
  appendFileSync(file, `${JSON.stringify({ owner, path, ...(job ? { job } : {}) })}\n`);
  const paths = mine.get(file) ?? [];
  paths.push(path);
  mine.set(file, paths);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const [f, list] of mine) if (list.every((p) => !existsSync(p))) rmSync(f, { force: true });
    });
  }
}

/**
 * A new folder `<parent>/<prefix><12 random hex>` (mode 0700, like `mkdtemp`) recorded as this
 * process's (`prefix` starts with `berth-`). Recorded BEFORE it is made: a `kill -9` between
 * `mkdtemp` and the record left a folder no owner listed, which `berth clean` never found (trust9:
 * test/tamper/probe-cleanup.test.ts, a probe folder killed at its birth under load). A record
 * whose folder was never made is dropped by the next reclaim.
 */
export async function ownedTempDir(
  prefix: string,
  options: { job?: string; parent?: string } = {},
): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const dir = join(options.parent ?? tmpdir(), `${prefix}${randomBytes(6).toString('hex')}`);
    recordLeftover(dir, options.job);
    try {
      await mkdir(dir, { mode: 0o700 });
      return dir;
    } catch (error) {
      // The name is taken (48 random bits: never in practice): another one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
    }
  }
}

/** What `reclaimLeftovers` removed. */
export interface ReclaimedFolders {
  /** Folders removed (unmounted first when they were a berth tmpfs). */
  folders: string[];
  /** Owners found dead whose records are now empty (and removed). */
  owners: string[];
}

function readEntries(file: string): Entry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const entries: Entry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const e = JSON.parse(line) as Entry;
      if (typeof e.owner === 'string' && typeof e.path === 'string') entries.push(e);
    } catch {
      // a line cut by a kill: nothing to remove for it
    }
  }
  return entries;
}

/** Every owner's record file (none when the folder does not exist yet). */
function ownerFiles(): string[] {
  try {
    return readdirSync(ownersDir())
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => join(ownersDir(), f));
  } catch {
    return [];
  }
}

/** True when some owner (alive or not) recorded a temp folder for `job` (the job's name). */
export function leftoversRecordJob(job: string): boolean {
  return ownerFiles().some((file) => readEntries(file).some((e) => e.job === job));
}

/**
 * Removes the folders recorded by owners that are no longer running (kill -9, a crash), those of
 * `job` only when given (plus those recorded for no job). A live owner's folders are never
 * touched; only absolute paths named `berth-*` are removed.
 */
export async function reclaimLeftovers(options: { job?: string } = {}): Promise<ReclaimedFolders> {
  const out: ReclaimedFolders = { folders: [], owners: [] };
  for (const file of ownerFiles()) {
    const entries = readEntries(file);
    const owner = entries[0]?.owner;
    if (owner !== undefined && ownerAlive(owner)) continue;
    const keep: Entry[] = [];
    for (const e of entries) {
      if (options.job !== undefined && e.job !== undefined && e.job !== options.job) {
        keep.push(e);
        continue;
      }
      if (!isAbsolute(e.path) || !basename(e.path).startsWith('berth-')) continue;
      if (!existsSync(e.path)) continue;
      await releaseFolder(e.path);
      await rm(e.path, { recursive: true, force: true, maxRetries: 3 });
      out.folders.push(e.path);
    }
    if (keep.length > 0) await writeFile(file, keep.map((e) => `${JSON.stringify(e)}\n`).join(''));
    else {
      await unlink(file).catch(() => {});
      if (owner !== undefined) out.owners.push(owner);
    }
  }
  return out;
}
