/**
 * The environment a verifier runs in after an agent that acted in it (issue 10 §2): no
 * process of the agent alive, and nothing the agent changed outside the work folder able
 * to decide the verdict.
 *
 * 1. Processes. Every process the agent started is gone before the verifier starts:
 *    `Environment.killStrayProcesses` (Docker: PID 1 killed, the kernel takes the whole pid
 *    namespace with it, so a process that forks a successor and exits cannot race the kill).
 *    The container stays stopped while berth reads its record and copies its work folder:
 *    nothing runs in it until a command starts it again, which runs the image's entrypoint
 *    again, maybe the agent's code; so with an entrypoint the verifier runs in a fresh
 *    environment (the agent's is never started again before that one verified), and the
 *    task's healthcheck never runs again here: breaker10 F5, F8, mend13). The
 *    local sandbox needs nothing: each command has its own pid namespace, killed when the
 *    command ends
 *    (test/trials/hopping-writers.test.ts proves both).
 * 2. The file system outside the work folder. Before the agent phase berth notes the
 *    engine's own record of what changed in the container against its image
 *    (`Environment.fileSystemChanges`, Docker's container diff, which no process in the
 *    container can edit); after it, what is new there outside the work folder, the agent's
 *    log folders and the scratch places (`SCRATCH`) is what the agent changed: an interpreter
 *    or tool on PATH, `sitecustomize.py` or a `.pth` in site-packages, `/etc`, `/usr`,
 *    `/tests`, `/logs/verifier`... Then:
 *    - the verifier runs in a FRESH environment of the same task that receives only the work
 *      folder (a tar stream from container to container: nothing touches the host), and the
 *      trial records reason `tampering` with what was seen (`berth.tampering`, layer
 *      `environment`; the verdict is the fresh environment's);
 *    - an environment that cannot copy its work folder into a fresh one fails closed:
 *      reward 0, status unresolved, reason `tampering`.
 *    Nothing changed there: the verifier runs in the agent's environment, as Harbor does.
 *    Places the record does not cover (`Environment.unrecorded`: Docker's tmpfs at an image's
 *    VOLUME paths) always send the verifier to a fresh environment, where they hold the image's
 *    files again; a place whose unseen writes could change what berth or a verifier runs is
 *    refused before the environment starts (`unrecordedPlaceRefusal`).
 * 3. `--rules harbor` (`inPlace`): the verifier runs in the agent's environment as Harbor does
 *    whatever the agent left there (its processes alive, its changes outside the work folder in
 *    place: a task whose solution is a service the agent started or a file in `/etc`). What was
 *    seen outside the work folder is still recorded, as a finding that refuses nothing.
 *
 * Known limit: a path the task's own step set-up changed before the agent and the agent
 * changed again is not seen (the record says "changed", not by whom).
 */
import { posix } from 'node:path';
import type { Environment, FileSystemChange } from '../environments/environment.ts';
import { shellQuote } from '../util/shell.ts';
import type { TamperFinding, TamperRecord } from '../verifiers/tampering/types.ts';
import type { VerifierResult } from '../verifiers/verifier.ts';
import { carryFolder } from './agent-work.ts';
import type { TrialResult } from './result.ts';

/**
 * Places outside the work folder where a change is not tampering: scratch no verifier loads
 * code from, and the state folders of the installed agents. `~` is `/root` and every
 * `/home/<user>`. The agent's own log folders (`<logs>/agent`, `<logs>/artifacts`) and
 * `/solution` (berth uploads the oracle's solution there) are allowed too; `<logs>/verifier`
 * and `/tests` are not. Package caches are NOT scratch (`~/.cache`, `/var/cache`): a `test.sh`
 * that installs its runner (`pip install pytest`, `uv pip install`) could take it from a cache
 * the agent poisoned.
 */
export const SCRATCH: readonly string[] = [
  '/tmp',
  '/var/tmp',
  '/run',
  '/var/run',
  '/dev',
  '/proc',
  '/sys',
  '/var/log',
  '/solution',
  '~/.npm',
  '~/.claude',
  '~/.claude.json',
  '~/.claude.json.backup',
  '~/.cache/claude-cli-nodejs',
  '~/.codex',
  '~/.gemini',
  '~/.qwen',
  '~/.local/share/opencode',
  '~/.local/state',
  '~/.bash_history',
  '~/.python_history',
  '~/.lesshst',
  '~/.viminfo',
  '~/.wget-hsts',
];

/** Scratch places that are the kernel's mounts, not the container's files (the engine's record lists nothing there). */
const KERNEL: readonly string[] = ['/dev', '/proc', '/sys'];

/**
 * The scratch places a verifier that runs in the agent's environment finds emptied of what the
 * agent added or changed there (`clearedPaths`): every one but the kernel's. Tools keep caches
 * there that a verifier's commands read: go's build cache where an image puts it in `/tmp`
 * (`GOCACHE=/tmp/go-cache`: the multilingual demo's image), jest's default cache folder
 * (`/tmp/jest_*`), npm's cache and what `npx` installed (`~/.npm`) (breaker8,
 * `harbor-go-forged-test-cache`: a forged cached `go test` result in /tmp/go-cache was resolved);
 * and a test may read what a program wrote in `/var/log` or `/run`, or tooling its state in the
 * installed agents' folders (trust9, `harbor-planted-scratch-log`: a log line the agent planted in
 * /var/log was resolved).
 */
export const CLEARED: readonly string[] = SCRATCH.filter((place) => !KERNEL.includes(place));

/**
 * Places that hold what the verifier runs (interpreters, libraries, configuration, the tests,
 * the verifier's output, start-up files of a home): a change there is the agent's change
 * outside its work folder even when the task's work folder contains them (a work folder of
 * `/`), unless the work folder itself lies inside the place (`/usr/src/app`).
 */
export const PROTECTED: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/opt',
  '/boot',
  '/var/lib',
  '/tests',
  '~/.local',
  '~/.config',
  '~/.bashrc',
  '~/.profile',
  '~/.bash_profile',
  '~/.pydistutils.cfg',
  '~/.npmrc',
];

/** How many changed paths a finding lists (the rest are counted). */
const LISTED = 20;

const below = (path: string, root: string) => {
  const r = root.replace(/\/+$/, '');
  return path === r || path.startsWith(`${r}/`);
};

/** The place of `places` (`~/` for `/root` and every `/home/<user>`) that `path` lies in, if any. */
function placeOf(path: string, places: readonly string[]): string | undefined {
  const home = /^\/home\/[^/]+/.exec(path)?.[0];
  for (const place of places) {
    if (!place.startsWith('~/')) {
      if (below(path, place)) return place;
      continue;
    }
    const rest = place.slice(1);
    if (below(path, `/root${rest}`)) return `/root${rest}`;
    if (home !== undefined && below(path, `${home}${rest}`)) return `${home}${rest}`;
  }
  return undefined;
}

/**
 * Whether `path` lies in the work folder (outside `PROTECTED` places the work folder is not
 * inside of), the agent's log folders or a scratch place.
 */
export function allowedChange(path: string, workdir: string, logsDir: string): boolean {
  if (below(path, posix.join(logsDir, 'verifier'))) return false;
  if (below(path, workdir)) {
    const place = placeOf(path, PROTECTED);
    if (place === undefined || below(workdir, place)) return true;
    return false;
  }
  if (below(path, posix.join(logsDir, 'agent')) || below(path, posix.join(logsDir, 'artifacts'))) return true;
  return placeOf(path, SCRATCH) !== undefined;
}

/**
 * Why `path` cannot be a place whose writes no record of changes lists (Docker: an image's VOLUME
 * path, a tmpfs of berth's: image-volumes.ts), or undefined when it can. A verifier never runs
 * after an agent where such a place is (it runs in a fresh environment, the place reset), but the
 * tests that run there are untrusted too, and berth's own commands after them trust the record
 * (`changesByTests`): so no such place may hold or lie in a `PROTECTED` place (a service's data
 * folder strictly below `/var/lib` may: nothing berth or a verifier runs is loaded from there),
 * the kernel's, `/`, the work folder (carried by the engine's archive, which does not read a
 * tmpfs), the folders berth copies in or out (`<logs>`, `/tests`, `/solution`), or a folder above one.
 */
export function unrecordedPlaceRefusal(path: string, workdir: string, logsDir: string): string | undefined {
  const p = posix.normalize(path).replace(/\/+$/, '') || '/';
  if (!p.startsWith('/')) return 'it is not an absolute path';
  if (p === '/') return 'it is the whole file system';
  const overlaps = (place: string) => below(p, place) || below(place, p);
  const dir = posix.normalize(workdir).replace(/\/+$/, '') || '/';
  if (overlaps(dir)) return `it overlaps the work folder ${dir}, which berth carries to a fresh environment`;
  for (const place of [logsDir, '/tests', '/solution'])
    if (overlaps(place)) return `it overlaps ${place}, which berth copies into or out of the environment`;
  for (const place of KERNEL) if (overlaps(place)) return `it overlaps the kernel's ${place}`;
  const inside = placeOf(p, PROTECTED);
  if (inside === '/var/lib' && p !== '/var/lib') return undefined;
  // A place inside `p`: `~/...` places lie in /root and in every /home/<user>.
  const homes = p === '/home' || below('/root', p) ? ['/root', '/home/*'] : (/^\/home\/[^/]+/.exec(p) ?? []);
  const holds = PROTECTED.find((place) =>
    place.startsWith('~/') ? homes.some((h) => below(`${h}${place.slice(1)}`, p)) : below(place, p),
  );
  const hit = inside ?? holds?.replace(/^~/, homes[0] ?? '~');
  if (hit !== undefined)
    return `its writes would be in no record of changes, and ${hit} holds what berth or a verifier runs`;
  return undefined;
}

const key = (c: FileSystemChange) => `${c.kind} ${c.path}`;

/**
 * What a test run changed that berth's own commands after it depend on: new entries of the
 * engine's record against `before` (taken right before the tests) in a `PROTECTED` place the
 * work folder is not inside of, the deepest paths only. In a container the tests run as root,
 * and berth's fingerprint and probe collection after them run the container's shell, `git`,
 * `stat` and `sha256sum`, its loader and libraries: a test run that replaced one of them could
 * make those commands print what it likes (breaker7: `pytest-restore-and-shim-stat`). Left out,
 * as nothing those commands run reads them: Python's byte-code caches (`__pycache__`, which an
 * interpreter running as root writes next to the modules it imports) and `~/.config` but for
 * git's (`~/.config/git`: matplotlib keeps its settings folder there).
 */
export function changesByTests(
  changes: readonly FileSystemChange[],
  before: ReadonlySet<string>,
  workdir: string,
): FileSystemChange[] {
  const fresh = changes.filter((c) => !before.has(key(c)));
  const paths = fresh.map((c) => c.path);
  const dir = workdir.replace(/\/+$/, '') || '/';
  return fresh.filter((c) => {
    if (paths.some((p) => p !== c.path && below(p, c.path))) return false;
    if (/\/__pycache__(\/|$)/.test(c.path)) return false;
    if (dir !== '/' && below(c.path, dir)) return false;
    const place = placeOf(c.path, PROTECTED);
    if (place === undefined) return false;
    if (place.endsWith('/.config')) return below(c.path, `${place}/git`);
    return true;
  });
}

/**
 * What the agent added or changed in a `CLEARED` place (new entries of `changes` against
 * `before`), to remove before a verifier runs in its environment: the topmost added paths, and
 * changed ones with nothing listed below them (a file, or a folder whose mode changed); never a
 * place itself, never a folder listed only because something below it changed, never the work
 * folder, what it holds when it lies in such a place (`/tmp/app`), or a folder above it.
 */
export function clearedPaths(
  changes: readonly FileSystemChange[],
  before: ReadonlySet<string>,
  workdir: string,
): string[] {
  const dir = workdir.replace(/\/+$/, '') || '/';
  // A work folder inside a cleared place (`/tmp/app`) is the agent's work: kept, with its parents.
  const workInside = placeOf(dir, CLEARED) !== undefined;
  const fresh = changes.filter((c) => !before.has(key(c)) && c.kind !== 'deleted');
  const inPlace = fresh.filter((c) => {
    const place = placeOf(c.path, CLEARED);
    if (place === undefined || c.path === place || below(dir, c.path)) return false;
    return !(workInside && below(c.path, dir));
  });
  const added = new Set(inPlace.filter((c) => c.kind === 'added').map((c) => c.path));
  const paths = fresh.map((c) => c.path);
  return inPlace
    .filter((c) =>
      c.kind === 'added'
        ? ![...added].some((p) => p !== c.path && below(c.path, p))
        : !paths.some((p) => p !== c.path && below(p, c.path)) && ![...added].some((p) => below(c.path, p)),
    )
    .map((c) => c.path)
    .sort();
}

/** The record before the agent phase (undefined: the environment keeps none). */
export async function fileSystemBefore(environment: Environment): Promise<Set<string> | undefined> {
  if (!environment.fileSystemChanges) return undefined;
  return new Set((await environment.fileSystemChanges()).map(key));
}

/**
 * What is new in `changes` against `before`, outside the allowed places, without the
 * folders Docker lists because something below them is listed (the deepest paths say it all).
 */
export function changesOutside(
  changes: readonly FileSystemChange[],
  before: ReadonlySet<string>,
  workdir: string,
  logsDir: string,
): FileSystemChange[] {
  const fresh = changes.filter((c) => !before.has(key(c)));
  const paths = fresh.map((c) => c.path);
  return fresh.filter(
    (c) => !allowedChange(c.path, workdir, logsDir) && !paths.some((p) => p !== c.path && below(p, c.path)),
  );
}

/** Why a verifier leaves the agent's environment that changed nothing outside its work folder. */
const ENTRYPOINT_RERUN =
  "the image's entrypoint would run again when the agent's environment started again after its processes were killed, and may run the agent's code";

/** A finding of layer `environment` (veto) for an agent's environment whose entrypoint would run again. */
function entrypointFinding(action: string): TamperFinding {
  return {
    kind: 'environment-changed',
    layer: 'environment',
    message: `${ENTRYPOINT_RERUN}; ${action}`,
    veto: true,
    paths: [],
  };
}

/** Why a verifier leaves an agent's environment with places no record lists. */
function unrecordedWhy(places: readonly string[]): string {
  return `the image's VOLUME paths (${places.join(', ')}) are tmpfs mounts whose writes no record of changes lists`;
}

/** A finding of layer `environment` (veto) for an agent's environment with places no record lists. */
function unrecordedFinding(places: readonly string[], action: string): TamperFinding {
  return {
    kind: 'environment-changed',
    layer: 'environment',
    message: `${unrecordedWhy(places)}; ${action}`,
    veto: true,
    paths: [],
  };
}

/** A finding of layer `environment` for what was seen outside the work folder. */
export function environmentFinding(
  seen: readonly FileSystemChange[],
  veto: boolean,
  action: string,
  actor = 'the agent',
): TamperFinding {
  const listed = seen.slice(0, LISTED).map((c) => `${c.kind} ${c.path}`);
  const more = seen.length > LISTED ? ` and ${seen.length - LISTED} more` : '';
  return {
    kind: 'environment-changed',
    layer: 'environment',
    message: `${actor} changed the environment outside the work folder (${listed.join(', ')}${more}); ${action}`,
    veto,
    paths: seen.slice(0, LISTED).map((c) => c.path),
  };
}

/** Adds `finding` to the trial's `berth.tampering` record (made when absent). */
export function addEnvironmentFinding(result: TrialResult, finding: TamperFinding): void {
  const record: TamperRecord = result.berth.tampering ?? { vetoed: false, findings: [], notes: [] };
  record.findings.push(finding);
  record.vetoed = record.vetoed || finding.veto;
  result.berth.tampering = record;
}

/** Where to verify, and what was done to get there. */
export type VerifierEnvironment =
  | {
      environment: Environment;
      /** A fresh environment made for this verifier: stop it after verifying. */
      fresh?: Environment;
      /** Processes of the agent the kill stopped. */
      killed: number;
      /** What the agent left in `CLEARED` places, removed before verifying in its environment. */
      cleared?: string[];
      finding?: TamperFinding;
      /** Why the verifier runs in a fresh environment when no finding says it (the entrypoint, unrecorded places). */
      note?: string;
    }
  | { failClosed: TamperFinding };

export interface VerifierEnvironmentOptions {
  /** `fileSystemBefore` of the agent's environment, taken before the agent phase. */
  before: ReadonlySet<string> | undefined;
  /** Starts a fresh environment of the same task (the engine's provider), ready to verify in. */
  start: () => Promise<Environment>;
  /** Whether the agent's environment is used again after this verifier (a step follows); else it is stopped when left. */
  keepOriginal: boolean;
  /** The trial's result, where a finding is recorded (`berth.tampering`). */
  result?: TrialResult;
  /**
   * `--rules harbor`: verify in the agent's environment as it was left (no process killed, no
   * fresh environment); a change outside the work folder is recorded and not acted on.
   */
  inPlace?: boolean;
}

/**
 * Makes `environment`, where an agent acted, fit for the verifier, or gives the fresh
 * environment to verify in instead (see the file's comment).
 */
export async function verifierEnvironment(
  environment: Environment,
  options: VerifierEnvironmentOptions,
): Promise<VerifierEnvironment> {
  const logsDir = environment.logsDir ?? '/logs';
  const changes = async () =>
    options.before && environment.fileSystemChanges ? await environment.fileSystemChanges() : [];
  if (options.inPlace) {
    const seen = changesOutside(await changes(), options.before ?? new Set(), environment.workdir, logsDir);
    if (seen.length === 0) return { environment, killed: 0 };
    const finding = environmentFinding(
      seen,
      false,
      "verified in the agent's environment as Harbor does (--rules harbor): not acted on",
    );
    if (options.result) addEnvironmentFinding(options.result, finding);
    return { environment, killed: 0, finding };
  }
  // Nothing of the agent runs any more (and nothing changes the work folder while it is copied).
  // Killed before the record is read: a process of the agent alive meanwhile could write a
  // python3 shim once the record was read and before the kill (breaker8).
  const killed = environment.killStrayProcesses ? await environment.killStrayProcesses() : 0;
  const changed = await changes();
  const seen = options.before ? changesOutside(changed, options.before, environment.workdir, logsDir) : [];
  // The container is stopped (Docker). Started again to verify in it, it would run the image's
  // entrypoint again: code the agent may have written (breaker10 F5). Never verified there: a
  // fresh environment, and the work folder is copied from the stopped container.
  const rerun = environment.killStrayProcesses !== undefined && environment.entrypoint === true;
  // What the agent wrote in places no record lists (an image's VOLUME paths) is unseen: a fresh
  // environment, where they hold the image's files again.
  const unrecorded = environment.unrecorded ?? [];
  if (seen.length === 0 && !rerun && unrecorded.length === 0) {
    // What the agent left where tools keep caches goes (`CLEARED`), as root, no process of it alive.
    const cleared = options.before ? clearedPaths(changed, options.before, environment.workdir) : [];
    if (cleared.length > 0) {
      const run = await environment.exec('xargs -0 -r rm -rf --', {
        user: 'root',
        cwd: '/',
        timeoutSec: 300,
        input: `${cleared.join('\0')}\0`,
      });
      if (run.exitCode !== 0)
        throw new Error(
          `could not remove what the agent left in ${CLEARED.join(', ')}: ${run.output.slice(-500)}`,
        );
    }
    // The task's healthcheck is not run again here: nothing it waits for started again (the image
    // has no entrypoint), and it would run as root after the record was read, a script the agent
    // may have edited (breaker10 F8).
    return { environment, killed, ...(cleared.length > 0 ? { cleared } : {}) };
  }
  const workdir = environment.workdir.replace(/\/+$/, '') || '/';
  if (!environment.archive || workdir === '/') {
    const why = environment.archive
      ? "the task's work folder is /, which cannot be carried alone into a fresh one"
      : 'this environment cannot carry its work folder into a fresh one';
    const finding =
      seen.length > 0
        ? environmentFinding(seen, true, `not verified: ${why} (failed closed)`)
        : rerun
          ? entrypointFinding(`not verified: ${why} (failed closed)`)
          : unrecordedFinding(unrecorded, `not verified: ${why} (failed closed)`);
    if (options.result) addEnvironmentFinding(options.result, finding);
    return { failClosed: finding };
  }
  const fresh = await options.start();
  try {
    // Only the work folder as the agent left it: the image's copy goes first.
    await fresh.exec(`rm -rf ${shellQuote(workdir)} && mkdir -p ${shellQuote(posix.dirname(workdir))}`, {
      user: 'root',
      cwd: '/',
      timeoutSec: 300,
    });
    // The multilingual carry's (src/trials/agent-work.ts): bounded by the disk limit (sparse files
    // count at their full size) and in time; a failure is the agent's (AgentWorkError) or berth's
    // (EnvironmentCopyError, retried) as there.
    await carryFolder(environment, workdir, fresh, posix.dirname(workdir));
  } catch (error) {
    await fresh.stop().catch(() => {});
    throw error;
  }
  if (!options.keepOriginal) await environment.stop();
  const action = 'verified in a fresh environment that received only the work folder';
  if (seen.length === 0)
    return {
      environment: fresh,
      fresh,
      killed,
      note: `${rerun ? ENTRYPOINT_RERUN : unrecordedWhy(unrecorded)}: ${action}`,
    };
  const finding = environmentFinding(seen, false, action);
  if (options.result) addEnvironmentFinding(options.result, finding);
  return { environment: fresh, fresh, killed, finding };
}

/** The verdict of a trial that failed closed on `finding`: reward 0, not resolved, reason tampering. */
export function tamperingVerdict(finding: TamperFinding): VerifierResult {
  return {
    rewards: { reward: 0 },
    status: 'unresolved',
    reason: `tampering: ${finding.message}`,
    details: { tampering_environment: finding.message },
  };
}
