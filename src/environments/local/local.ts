/**
 * The local environment: a fresh temporary folder on this machine holding the
 * task's repository committed as its single base commit. Commands run in their
 * own process group with a timeout that kills the group. Where the machine
 * allows it every command runs sandboxed (src/sandbox/isolation.ts, host view):
 * own pid namespace, no network unless the policy is `public`, the host
 * read-only except the trial's folder, and an unprivileged uid that owns that
 * folder. Every command, the dataset's set-up included, gets the environment's
 * resource limits (src/sandbox/limits.ts): processes, memory, CPU, file size,
 * and, as root, the trial folder is a size-capped tmpfs.
 *
 * Layout of the temporary folder (the root, berth's, mode 0711): `repo/` (the working
 * folder), `logs/agent`, `logs/verifier`, `logs/artifacts` (Harbor's log folders, see
 * `logsDir`) and `tmp/` (TMPDIR where the sandbox has no private /tmp). The three belong
 * to the trial's uid; the root does not, so sandboxed code can neither rename nor replace
 * them. Files cross the boundary only through `upload` and `download`, which never follow
 * a link planted below the root (src/util/safe-fs.ts). A repository started from the install
 * cache is an overlay on the entry (copy-on-write, seen as the trial's uid's; its upper folder in
 * `<root>/.overlay`, root's, 0700), else a copy made as the trial's uid (install-cache.ts).
 * With bwrap, commands see the root also at `TRIAL_ALIAS` and start there (`PWD`), the same
 * path in every trial.
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lchown, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { execa } from 'execa';
import { InputError } from '../../errors.ts';
import { capFolder, releaseFolder } from '../../sandbox/capped-folder.ts';
import { cgroupSupport } from '../../sandbox/cgroup.ts';
import {
  claimIdentity,
  isRoot,
  processesOfUid,
  releaseIdentity,
  type SandboxIdentity,
} from '../../sandbox/identity.ts';
import {
  checkHostMethod,
  closeInheritedFds,
  hostViewPrefix,
  type IsolationMethod,
  probeIsolation,
} from '../../sandbox/isolation.ts';
import {
  type LimitName,
  type LimitRequest,
  type LimitsRecord,
  type ResourceLimits,
  resolveLimits,
  taskResources,
} from '../../sandbox/limits.ts';
import { withoutSecrets } from '../../sandbox/secrets.ts';
import { findMirror } from '../../tasks/swebench/runnable.ts';
import type { NetworkPolicy } from '../../tasks/task.ts';
import { ownedTempDir } from '../../util/leftovers.ts';
import { hostPlatform } from '../../util/platform.ts';
import { type CopyLimits, type CopyReport, copyInBeneath, copyOutBeneath } from '../../util/safe-fs.ts';
import { shellQuote } from '../../util/shell.ts';
import { traced, traceSince, tracing } from '../../util/trace.ts';
import {
  COPY_TIMEOUT_SEC,
  CopyTimeoutError,
  type Environment,
  type EnvironmentLimits,
  type EnvironmentProvider,
  type EnvironmentStartContext,
  type ExecOptions,
  type ExecResult,
  type InstallCache,
  type TestRunPreparation,
  type ToolInstall,
  type ToolInstallRecord,
} from '../environment.ts';
import { failedInstall } from '../tool-install.ts';
import {
  COMPILE_ENV,
  compileScript,
  goFlags,
  goPackagesOf,
  goTool,
  readCompileOutput,
  repositoryContent,
} from './go-cache.ts';
import {
  copyVerifierGoCache,
  goCacheFilled,
  installCacheEnabled,
  installCacheKey,
  installOverlayEnabled,
  installsDir,
  markGoCacheFilled,
  mergeGoCache,
  type Restored,
  readEntry,
  restoreEntry,
  saveEntry,
} from './install-cache.ts';
import { checkoutFromMirror, commitBase, writeSnapshot } from './materialise.ts';
import { unmountAll } from './overlay.ts';
import { runProcess } from './process.ts';

/**
 * Where a sandboxed command (bwrap) sees the trial's folder besides its own path: a link in the
 * sandbox's private /tmp, and the command's `PWD` goes through it. The same in every trial, so a
 * build cache keyed by folder (Go's) serves a later trial what the first one compiled.
 */
export const TRIAL_ALIAS = '/tmp/berth-trial';

/** The environment commands get: the host's, minus credential-like variables, plus `extra`. */
export function commandEnv(extra?: Record<string, string>): Record<string, string> {
  return { ...withoutSecrets(), ...extra };
}

export interface LocalProviderOptions {
  /** Folder of git mirrors (`owner__repo` or `owner/repo`) for rows without a snapshot. */
  reposDir?: string;
  /** Parent of the temporary folders (default the OS temp folder). */
  tmpRoot?: string;
  /**
   * `auto` (default) uses the first method that works here; `off` runs every command with
   * the host network (recorded as not isolated); a method name uses that method if it works.
   */
  isolation?: 'auto' | 'off' | IsolationMethod;
  /** Keep the temporary folder after the trial (for debugging; it is then not a capped tmpfs). */
  keep?: boolean;
  /** Limits from the command line (`--override-cpus`, `--override-memory-mb`, `--override-storage-mb`). */
  limits?: LimitRequest;
  /** Trials run at once (`-n`): the process limit keeps the host's pids within budget for all of them. */
  concurrency?: number;
  /**
   * Start from the install cache (src/environments/local/install-cache.ts): default on,
   * `BERTH_INSTALL_CACHE=0` turns it off.
   */
  installCache?: boolean;
}

/** The limits of one local environment, what enforces them, and what its commands ran into. */
class LocalLimits implements EnvironmentLimits {
  private hits = new Set<LimitName>();
  constructor(
    readonly limits: ResourceLimits,
    readonly record: LimitsRecord,
  ) {}
  note(hit: readonly LimitName[] | undefined): void {
    for (const h of hit ?? []) this.hits.add(h);
  }
  async takeHits(): Promise<LimitName[]> {
    const out = [...this.hits];
    this.hits.clear();
    return out;
  }
}

/** How the limits are enforced for an environment whose folder is (or is not) a capped tmpfs. */
function limitsRecord(limits: ResourceLimits, capped: string | undefined, asRoot: boolean): LimitsRecord {
  const cg = cgroupSupport();
  const by = cg.version === 'v2' ? 'cgroup-v2' : cg.version === 'v1' ? 'cgroup-v1' : undefined;
  const notes = [...cg.notes];
  if (capped) notes.push(`trial folder not size-capped: ${capped}`);
  if (!by && asRoot)
    notes.push('processes: no cgroup and commands run as root, where RLIMIT_NPROC does not bind');
  if (!by) notes.push('memory: no cgroup; RLIMIT_DATA bounds each process, not their sum');
  if (limits.cpus !== undefined && !cg.dirs.cpu) notes.push('cpus: no cpu cgroup controller; not enforced');
  return {
    processes: limits.processes,
    memory_bytes: limits.memoryBytes,
    cpus: limits.cpus ?? null,
    disk_bytes: limits.diskBytes,
    enforced_by: {
      processes: by ?? (asRoot ? 'none' : 'rlimit'),
      memory: by ?? 'rlimit',
      cpus: limits.cpus !== undefined && by && cg.dirs.cpu ? by : 'none',
      cpu_time: 'rlimit',
      file_size: 'rlimit',
      disk: capped === undefined ? 'tmpfs' : 'none',
    },
    notes,
  };
}

export class LocalEnvironment implements Environment {
  readonly kind = 'local';
  private stopped = false;
  /** The installed agent: a prepared host folder, bound read-only into the sandbox by the commands that use it. */
  toolInstall?: ToolInstallRecord;
  /** The install cache's entry of this environment's snapshot and install (see `cacheOn`). */
  installCache?: InstallCache;
  /** Aborted by halt() and stop(): every running command's process group is killed. */
  private readonly stopping = new AbortController();
  /** Commands running now (`halt` waits for their ends). */
  private readonly running = new Set<Promise<unknown>>();
  /** Set by `halt`: no command runs after. */
  private halted = false;
  /** The install cache entry whose verifier Go build cache the test run gets (go-cache.ts). */
  goEntry?: string;
  /** The entry's verifier Go build cache, mounted copy-on-write at start (install-cache.ts `restoreEntry`). */
  goVerify?: Restored['goVerify'];
  /** The repository overlay's upper folder (what the trial changed in the entry's `repo/`), with the overlay. */
  repoUpper?: string;
  /** GOCACHE of every command from the test run on (prepareTestRun), else `<root>/cache/go-build`. */
  private testGoCache?: string;

  constructor(
    /** Temporary root; the repository is `<root>/repo`. */
    readonly root: string,
    readonly workdir: string,
    private readonly isolationMethod: IsolationMethod | undefined,
    /** Sha of the base commit berth made. */
    readonly baseCommit: string,
    private readonly keep = false,
    /** The uid sandboxed commands run as (owner of `root`), and its slot (released at stop). */
    private readonly sandbox: { slot: number; identity: SandboxIdentity } | undefined = undefined,
    /** The resource limits of every command. */
    readonly limits: LocalLimits = new LocalLimits(
      resolveLimits(),
      limitsRecord(resolveLimits(), 'not asked', false),
    ),
    /** Whether `root` is a size-capped tmpfs (unmounted at stop). */
    private readonly capped = false,
    /** Mounts made in the trial folder (the repository's overlay, install-cache.ts), unmounted at stop. */
    private readonly mounts: readonly string[] = [],
  ) {}

  get isolated(): boolean {
    return this.isolationMethod !== undefined;
  }

  /** Harbor's `/logs` of this environment: `<root>/logs` (agent/, verifier/, artifacts/). */
  get logsDir(): string {
    return join(this.root, 'logs');
  }

  /** How untrusted commands are isolated (`bwrap`, `unshare`, `unshare-user`), if at all. */
  get isolationMethodName(): string | undefined {
    return this.isolationMethod;
  }

  private inside(path: string): string {
    return isAbsolute(path) ? path : resolve(this.workdir, path);
  }

  /** `path` (absolute, or relative to the working folder) relative to the root; throws outside it. */
  private belowRoot(path: string): string {
    const rel = relative(this.root, this.inside(path));
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
      throw new Error(`${path} is outside the local environment (${this.root})`);
    return rel;
  }

  /**
   * Runs a shell command (`bash -c`). With isolation every command, trusted bookkeeping
   * included, runs in the sandbox as the trial's uid (so git sees one owner, and a reset
   * cannot follow a symlink out of the trial's folder into a writable host path); the
   * network is cut unless `options.network` is `public`. A `setup` command (the dataset's
   * install, before any agent code) runs with berth's rights, as before the sandbox existed,
   * but within the same resource limits. `options.user` is not supported locally (ignored).
   */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.execWith(command, options, options.input);
  }

  /** `exec`, with standard input that may also be a stream (`extractArchive`); `halt` waits for it. */
  private async execWith(
    command: string,
    options: ExecOptions,
    input: string | Uint8Array | Readable | undefined,
  ): Promise<ExecResult> {
    if (this.stopped) throw new Error('the environment is stopped');
    if (this.halted) throw new Error('the environment is halted: no command runs in it');
    const run = this.execNow(command, options, input);
    this.running.add(run);
    try {
      return await run;
    } finally {
      this.running.delete(run);
    }
  }

  /**
   * Capability "halt": kills every command still running (each one's process group, pid
   * namespace and cgroup, as at its end: runToEnd) and waits until each has ended; no command
   * runs after. The root stays as it is for `archive` and `download`. A command normally leaves
   * nothing behind it; one still running is an agent's the engine gave up waiting for (its
   * timeout). Safe to call twice.
   */
  async halt(): Promise<void> {
    this.halted = true;
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
  }

  private async execNow(
    command: string,
    options: ExecOptions,
    input: string | Uint8Array | Readable | undefined,
  ): Promise<ExecResult> {
    const network: NetworkPolicy = options.network ?? { mode: 'no-network' };
    const argv = ['bash', '-c', command];
    let prefix: string[] = [];
    let spawnAs: SandboxIdentity;
    let bwrapped = false;
    // Go's build cache: the trial's own copy of the warm one (install-cache.ts), never the host's;
    // no go test result is ever served from a cache (go-cache.ts).
    const extra: Record<string, string> = {
      GOCACHE: this.testGoCache ?? join(this.root, 'cache', 'go-build'),
      GOFLAGS: goFlags(),
    };
    const limits = this.limits.limits;
    const cwd = options.cwd ? this.inside(options.cwd) : this.workdir;
    if (this.isolationMethod && !options.setup) {
      const below = relative(this.root, cwd);
      const alias =
        this.isolationMethod === 'bwrap' && !below.startsWith('..') && !isAbsolute(below)
          ? { at: TRIAL_ALIAS, of: this.root, cwd: join(TRIAL_ALIAS, below) }
          : undefined;
      if (alias) extra.PWD = alias.cwd;
      for (const bind of options.binds ?? []) if (bind.writable) await this.handOverBind(bind.path);
      const sandbox = hostViewPrefix(this.isolationMethod, {
        writable: this.root,
        ...(options.binds ? { binds: options.binds } : {}),
        noNetwork: network.mode !== 'public',
        identity: this.sandbox?.identity,
        // The private /tmp and home live in memory: no bigger than the memory limit.
        tmpfsBytes: Math.min(limits.diskBytes, limits.memoryBytes),
        ...(alias ? { alias } : {}),
      });
      prefix = sandbox.prefix;
      spawnAs = sandbox.spawnAs;
      bwrapped = prefix[0] === 'bwrap';
      // berth's own TMPDIR may be outside the sandbox's writable places.
      if (this.isolationMethod === 'bwrap') extra.TMPDIR = '/tmp';
      else if (this.sandbox?.identity) extra.TMPDIR = join(this.root, 'tmp');
    }
    // Descriptors berth's parent leaked (not close-on-exec) are closed before anything else
    // starts: Node, setpriv, prlimit and bwrap pass them on, and one naming a host folder gave
    // the sandboxed agent the whole host through /proc/self/fd/N/.. (breaker13 F1).
    prefix = [...closeInheritedFds(), ...prefix];
    const run = () =>
      runProcess(argv, {
        prefix,
        limits: {
          processes: limits.processes,
          memoryBytes: limits.memoryBytes,
          ...(limits.cpus !== undefined ? { cpus: limits.cpus } : {}),
          fileBytes: limits.fileBytes,
          ...(limits.cpuSec !== undefined ? { cpuSec: limits.cpuSec } : {}),
        },
        ...(this.capped ? { cappedFolder: this.root } : {}),
        cwd,
        env: commandEnv({ ...extra, ...options.env }),
        ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
        ...(options.timeoutSec !== undefined ? { timeoutSec: options.timeoutSec } : {}),
        ...(options.outputFile ? { outputFile: options.outputFile } : {}),
        ...(options.maxOutputBytes !== undefined || limits.outputBytes !== undefined
          ? { maxOutputBytes: Math.min(options.maxOutputBytes ?? Infinity, limits.outputBytes ?? Infinity) }
          : {}),
        ...(input !== undefined ? { input } : {}),
        signal: options.signal
          ? AbortSignal.any([options.signal, this.stopping.signal])
          : this.stopping.signal,
      });
    const traceStart = performance.now();
    let result = await run();
    // bwrap binds the host's mounts one by one: a mount that goes away meanwhile (a container
    // of the Docker engine stopping) fails the set-up before the command ran. Run it again.
    for (let retry = 0; retry < 3 && bwrapped && bwrapSetupFailed(result); retry++)
      result = await run();
    this.limits.note(result.limitsHit);
    if (tracing)
      traceSince(`local exec ${options.setup ? '(setup) ' : ''}${traceLabel(command)}`, traceStart);
    // What a set-up command (berth's user) left in the trial folder goes back to the trial's uid.
    if (options.setup) await this.handOver(SANDBOX_DIRS.map((dir) => join(this.root, dir)));
    return result;
  }

  /**
   * Makes `installCache` for the entry `key`: `hit` when this environment started from it; else
   * its `save()` warms a Go repository's build cache (compiling the tests, running none) and keeps
   * the repository as it is now as the entry. Called before any agent code ran in it.
   */
  cacheOn(key: string, hit: boolean, install: string, restored?: Omit<Restored, 'mounts'>): void {
    this.installCache = {
      hit,
      key,
      ...(restored ? { method: restored.method } : {}),
      ...(restored?.note ? { note: restored.note } : {}),
      save: async () => {
        if (hit || this.stopped) return;
        try {
          const goCache = join(this.root, 'cache', 'go-build');
          if (existsSync(join(this.workdir, 'go.mod')))
            await this.exec(`go test -count=1 -run '^$' -exec /bin/true ./... >/dev/null 2>&1 || true`, {
              timeoutSec: 600,
              // The row's own base commit, before any agent ran: cgo as the tests will have it
              // (go's default), so `net`, `runtime/cgo` and what imports them are warm too.
              env: WARM_ENV,
            });
          await saveEntry(key, this.workdir, goCache, { baseCommit: this.baseCommit, install });
          if (existsSync(join(installsDir(), key, 'go-verify'))) this.goEntry = key;
        } catch (error) {
          // A cache that cannot be written never fails a trial.
          process.emitWarning(`berth: install cache not saved: ${(error as Error).message}`);
        }
      },
    };
  }

  /**
   * The test run's Go build cache (go-cache.ts): the agent's is dropped, the entry's verifier
   * cache copied in its place, the repository compiled into it by the go tool alone (unless this
   * content was compiled before) and what that made added to the entry for later trials. Called
   * by the verifier after the test patch is applied, when no process of the trial is alive.
   */
  async prepareTestRun(
    options: { testFiles?: readonly string[]; agentActed?: boolean; signal?: AbortSignal } = {},
  ): Promise<TestRunPreparation | undefined> {
    const { signal } = options;
    const key = this.goEntry;
    const go = goTool();
    if (this.stopped) return undefined;
    const owner = this.isolationMethod ? this.sandbox?.identity : undefined;
    // The verifier runs where the agent did (a multilingual task): what its commands left in
    // `tmp/` (TMPDIR where the sandbox has no private /tmp: jest's cache...) goes.
    if (options.agentActed) await this.emptyFolder(join(this.root, 'tmp'), owner);
    // BERTH_GO_VERIFY_CACHE=0: the tests run on the environment's cache as before (to measure
    // without it), unless the agent wrote it: then on an empty one (trust9,
    // multilingual-go-swapped-object-code: an entry pointed at the agent's object code).
    if (key === undefined || go === undefined || process.env.BERTH_GO_VERIFY_CACHE === '0') {
      if (options.agentActed) await this.dropBuildCache(owner);
      return undefined;
    }
    const started = performance.now();
    const seconds = () => Math.round(performance.now() - started) / 1000;
    // What go writes from here on: the whole cache, or (an overlay) its upper folder.
    let written: string;
    if (this.goVerify) {
      // Mounted at start behind a folder only root could pass (no agent reached it); from now
      // on the trial's uid may, and the commands' GOCACHE is it: the agent's `cache/` is unused.
      await chmod(this.goVerify.gate, 0o711);
      this.testGoCache = this.goVerify.cache;
      written = this.goVerify.upper;
    } else {
      const goCache = await this.dropBuildCache(owner);
      await traced('local go: copy go-verify', () => copyVerifierGoCache(key, goCache, owner));
      written = goCache;
    }
    const packages = goPackagesOf(options.testFiles ?? []);
    // berth hashes the repository itself (no process of the trial is alive; no link followed):
    // a content compiled before needs no sandboxed command at all. On the overlay, first what
    // the trial changed in the entry (a few files); on a miss the whole tree, which the first
    // trial of the snapshot (no overlay yet) marked, and a hit there marks the changes too.
    const [filled, changes] = await Promise.all([
      goCacheFilled(key),
      this.repoUpper
        ? traced('local go: content hash (changes)', () =>
            repositoryContent({ changes: this.repoUpper as string, entry: key }, go, packages),
          )
        : undefined,
    ]);
    if (changes !== undefined && filled.includes(changes))
      return { tool: 'go', outcome: 'hit', content: changes, added: 0, durationSec: seconds() };
    const whole = await traced('local go: content hash', () =>
      repositoryContent({ tree: this.workdir }, go, packages),
    );
    if (whole !== undefined && filled.includes(whole)) {
      if (changes !== undefined) await markGoCacheFilled(key, changes);
      return { tool: 'go', outcome: 'hit', content: whole, added: 0, durationSec: seconds() };
    }
    const known = whole ?? changes;
    const run = await this.exec(compileScript(go, packages, known ? { content: known } : {}), {
      env: { ...COMPILE_ENV, BERTH_GO_FILLED: filled.join(' ') },
      timeoutSec: 600,
      ...(signal ? { signal } : {}),
    });
    const out = readCompileOutput(run.output);
    const content = out.content ? { content: out.content } : {};
    if (out.hit) return { tool: 'go', outcome: 'hit', ...content, added: 0, durationSec: seconds() };
    if (out.cgo) return { tool: 'go', outcome: 'cgo', ...content, added: 0, durationSec: seconds() };
    if (run.timedOut || out.exit === undefined || out.content === undefined)
      return { tool: 'go', outcome: 'failed', ...content, added: 0, durationSec: seconds() };
    // The copy is the trial's uid's: merge only once no process of that uid can still write it
    // (the step's pid namespace and cgroup are gone; this checks the host's whole process table).
    if (owner && processesOfUid(owner.uid).length > 0)
      return { tool: 'go', outcome: 'failed', ...content, added: 0, durationSec: seconds() };
    const added = await traced('local go: merge', () => mergeGoCache(key, written, out.content as string));
    if (changes !== undefined && changes !== out.content) await markGoCacheFilled(key, changes);
    return { tool: 'go', outcome: 'filled', ...content, added, durationSec: seconds() };
  }

  /**
   * Replaces the trial's `cache/` (the commands' GOCACHE, `cache/go-build`) by an empty one of the
   * trial's uid: whatever the agent made of it (links included) goes whole; the agent's overlay
   * on `go-build/` first (rm would empty it file by file, then fail). Returns `cache/go-build`.
   */
  private async dropBuildCache(owner: SandboxIdentity | undefined): Promise<string> {
    const cacheDir = join(this.root, 'cache');
    const goCache = join(cacheDir, 'go-build');
    await unmountAll(this.mounts.filter((point) => point.startsWith(`${cacheDir}${sep}`)));
    await this.emptyFolder(cacheDir, owner);
    await mkdir(goCache);
    if (owner) await chown(goCache, owner.uid, owner.gid);
    return goCache;
  }

  /** Makes `path` (a folder of the root) again, empty, the trial's uid's; rm follows no link. */
  private async emptyFolder(path: string, owner: SandboxIdentity | undefined): Promise<void> {
    await rm(path, { recursive: true, force: true });
    await mkdir(path);
    if (owner) await chown(path, owner.uid, owner.gid);
  }

  /** Gives the trial's uid the files under `paths` (symlinks themselves, never their targets). */
  private async handOver(paths: string | readonly string[]): Promise<void> {
    const identity = this.sandbox?.identity;
    if (identity && this.isolationMethod) await handOver(paths, identity);
  }

  /**
   * Gives the trial's uid a writable host folder bound into the sandbox (berth's own, small: the
   * tamper probes' output folder): in this process when it holds a few entries, else `chown -R`.
   */
  private async handOverBind(path: string): Promise<void> {
    const identity = this.sandbox?.identity;
    if (!identity || !this.isolationMethod) return;
    if (!(await chownSmallTree(path, identity, 64))) await handOver(path, identity);
  }

  /** Copies a host file or folder in, replacing links planted on the way; what it writes goes to the trial's uid. */
  async upload(hostPath: string, environmentPath: string): Promise<void> {
    const identity = this.isolationMethod ? this.sandbox?.identity : undefined;
    await copyInBeneath(hostPath, this.root, this.belowRoot(environmentPath), identity);
  }

  /**
   * Capability "folder transfer": a tar stream of the folder `path` (its last name as the
   * archive's top name), made by berth's own `tar` on the host, never the environment's: links
   * are stored as links (never followed), fifos as fifos (never opened). Called after `halt`,
   * when no process of the environment runs. The stream fails when tar does.
   */
  async archive(path: string): Promise<Readable> {
    const full = join(this.root, this.belowRoot(path));
    const child = spawn(
      'tar',
      ['--create', '--file=-', '--numeric-owner', '--directory', dirname(full), '--', basename(full)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out = new PassThrough();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.stdout.pipe(out, { end: false });
    child.on('error', (error) => out.destroy(error));
    child.on('close', (code, signal) => {
      if (code === 0) out.end();
      else
        out.destroy(new Error(`tar of ${path} ended with ${code ?? signal}: ${stderr.trim().slice(-500)}`));
    });
    // A consumer that stops reading must not leave tar running.
    out.on('close', () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    return out;
  }

  /**
   * Extracts a tar stream into the folder `path` (made when missing) with `tar -x` run as an
   * untrusted command (sandboxed, as the trial's uid, within the limits): whatever the archive
   * holds can reach no more than that command could.
   * @throws when tar fails or the stream does
   */
  async extractArchive(
    path: string,
    archive: Readable,
    options: { timeoutSec?: number } = {},
  ): Promise<void> {
    const target = join(this.root, this.belowRoot(path));
    let failed: Error | undefined;
    archive.on('error', (error) => {
      failed ??= error;
    });
    const timeoutSec = options.timeoutSec ?? COPY_TIMEOUT_SEC;
    const run = await this.execWith(
      `mkdir -p -- ${shellQuote(target)} && exec tar --extract --file=- --no-same-owner --directory ${shellQuote(target)}`,
      { timeoutSec },
      archive,
    );
    if (run.timedOut) {
      archive.destroy();
      throw new CopyTimeoutError(`the copy into ${path} did not end within ${timeoutSec} s`);
    }
    if (failed) throw failed;
    if (run.exitCode !== 0)
      throw new Error(`tar could not extract into ${path} (exit ${run.exitCode}): ${run.output.slice(-500)}`);
  }

  /** Copies out as data (regular files and folders; links and special files recorded, never followed). */
  async download(environmentPath: string, hostPath: string, limits?: CopyLimits): Promise<CopyReport> {
    return copyOutBeneath(this.root, this.belowRoot(environmentPath), hostPath, limits);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    if (this.sandbox) releaseIdentity(this.sandbox.slot);
    // The overlays and then the trial's tmpfs under them, with one `umount`.
    await traced('local stop: unmount', () =>
      unmountAll(this.capped ? [this.root, ...this.mounts] : this.mounts),
    );
    // Left mounted (busy)? releaseFolder detaches it; else it only reads the mount table.
    if (this.capped) await traced('local stop: tmpfs', () => releaseFolder(this.root));
    if (!this.keep)
      await traced('local stop: remove', () =>
        rm(this.root, { recursive: true, force: true, maxRetries: 3 }),
      );
  }
}

/** Whether bwrap failed while it built the sandbox (a mount that changed meanwhile), before the command ran. */
function bwrapSetupFailed(result: ExecResult): boolean {
  return result.exitCode === 1 && /^bwrap: Can't (bind mount|remount|mount)/.test(result.output.trimStart());
}

/** The base-commit warm step's variables: the compile step's, with go's own cgo and linker defaults. */
const WARM_ENV: Record<string, string> = Object.fromEntries(
  Object.entries(COMPILE_ENV).filter(([name]) => name !== 'CGO_ENABLED' && name !== 'GO_EXTLINK_ENABLED'),
);

/** The root's folders sandboxed commands write (all else in the root is berth's). */
const SANDBOX_DIRS = ['repo', 'logs', 'tmp', 'cache'] as const;

/** The folders of the root berth makes at start besides `repo`, parents first; the trial's uid's. */
const BERTH_MADE_DIRS = ['logs', 'logs/agent', 'logs/verifier', 'logs/artifacts', 'tmp', 'cache'] as const;

/**
 * `chown -R` (which never follows symlinks) of `paths` to `identity`, one process: only what
 * root owns (what berth or a set-up command made). `--from=0` leaves every other file alone
 * without a chown call, so a repository on an overlay (install-cache.ts) is not copied up file
 * by file (which costs the whole tree and fails when the trial's tmpfs is full).
 */
async function handOver(paths: string | readonly string[], identity: { uid: number; gid: number }) {
  const list = typeof paths === 'string' ? [paths] : paths;
  if (list.length > 0)
    await execa('chown', ['-R', '-P', '--from=0', `${identity.uid}:${identity.gid}`, '--', ...list]);
}

/**
 * `lchown` of `path` and what is below it (never following a link) to `identity`, when it holds
 * at most `maxEntries` entries; false (nothing or part changed) when it holds more.
 */
async function chownSmallTree(
  path: string,
  identity: { uid: number; gid: number },
  maxEntries: number,
): Promise<boolean> {
  const found: string[] = [path];
  for (let i = 0; i < found.length; i++) {
    const at = found[i] as string;
    if (!(await lstat(at)).isDirectory()) continue;
    for (const entry of await readdir(at, { withFileTypes: true })) {
      found.push(join(at, entry.name));
      if (found.length > maxEntries + 1) return false;
    }
  }
  for (const at of found) await lchown(at, identity.uid, identity.gid);
  return true;
}

/** A tool for this machine: its prepared host folder (cached), seen read-only at the same path. */
async function installTool(tool: ToolInstall): Promise<ToolInstallRecord> {
  const started = performance.now();
  const log: string[] = [];
  const platform = hostPlatform();
  let result: { folder: string; prepared: boolean };
  try {
    result = await tool.prepare(platform, (line) => log.push(line));
  } catch (error) {
    // The agent's set-up reports it, with the log.
    return failedInstall(tool, error, log);
  }
  const { folder, prepared } = result;
  return {
    home: folder,
    platform,
    installed: prepared,
    durationSec: Math.round(performance.now() - started) / 1000,
    log,
    binds: [{ path: folder }],
  };
}

/** Starts local environments for tasks whose EnvironmentSpec kind is `local`. */
export class LocalEnvironmentProvider implements EnvironmentProvider {
  readonly kind = 'local' as const;

  constructor(private readonly options: LocalProviderOptions = {}) {}

  /**
   * Materialises the task's repository (snapshot or mirror) in a fresh temporary folder.
   * @throws InputError when the task has neither a snapshot nor a usable mirror.
   */
  async start(context: EnvironmentStartContext): Promise<LocalEnvironment> {
    return traced('local start', () => this.startOnce(context));
  }

  private async startOnce(context: EnvironmentStartContext): Promise<LocalEnvironment> {
    const spec = context.task.environment;
    if (spec.kind !== 'local') throw new Error(`the local provider cannot start a ${spec.kind} environment`);
    const parent = this.options.tmpRoot ?? tmpdir();
    await mkdir(parent, { recursive: true });
    const safeJob = context.jobId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
    // Recorded under this process (src/util/leftovers.ts): a kill -9 leaves it to the next run, not forever.
    const root = this.options.keep
      ? await mkdtemp(join(parent, `berth-${safeJob}-`))
      : await ownedTempDir(`berth-${safeJob}-`, { job: context.jobId, parent });
    const workdir = join(root, 'repo');
    const limits = resolveLimits(taskResources(spec), this.options.limits, this.options.concurrency);
    // The trial folder is a tmpfs of the storage size (as root), kept as a plain folder with --keep.
    const notCapped = this.options.keep
      ? 'kept for debugging (--keep-environments)'
      : await traced('local start: tmpfs', () => capFolder(root, limits.diskBytes, undefined, 0o700));
    const capped = notCapped === undefined;
    let sandbox: ReturnType<typeof claimIdentity> | undefined;
    let restored: Restored | undefined;
    try {
      // The root stays berth's (mkdtemp made it 0700): the trial's uid may pass through it, not list or change it.
      await chmod(root, 0o711);
      await mkdir(workdir);
      for (const dir of BERTH_MADE_DIRS) await mkdir(join(root, dir));
      const wanted = this.options.isolation ?? 'auto';
      const method =
        wanted === 'off'
          ? undefined
          : wanted === 'auto'
            ? probeIsolation().method
            : checkHostMethod(wanted) === undefined
              ? wanted
              : undefined;
      // Claimed before the copy, so the copy is made as the trial's uid (no `chown -R` after it).
      sandbox = method ? claimIdentity() : undefined;
      const key =
        (this.options.installCache ?? installCacheEnabled()) ? installCacheKey(spec, context.env) : undefined;
      const entry = key ? await readEntry(key) : undefined;
      if (key && entry) {
        // An overlay's upper folder must be on the trial's own capped tmpfs (its writes count there).
        restored = await traced('local start: restore entry', () =>
          restoreEntry(key, entry, workdir, join(root, 'cache', 'go-build'), {
            owner: sandbox?.identity,
            ...(capped && installOverlayEnabled()
              ? {
                  overlay: {
                    scratch: join(root, '.overlay'),
                    ...(process.env.BERTH_GO_VERIFY_CACHE === '0'
                      ? {}
                      : { goVerify: join(root, '.go-verify') }),
                  },
                }
              : {}),
          }),
        );
      } else if (spec.snapshot) {
        await writeSnapshot(workdir, spec.snapshot);
      } else if (spec.folder) {
        // The folder's own .git (hooks, config) never comes along: berth commits the base itself.
        const source = spec.folder;
        await cp(source, workdir, {
          recursive: true,
          verbatimSymlinks: true,
          filter: (path) => relative(source, path).split(sep)[0] !== '.git',
        });
      } else {
        const where = {
          file: context.task.origin.file,
          ...(context.task.origin.line !== undefined ? { line: context.task.origin.line } : {}),
        };
        if (!spec.repo || !spec.baseCommit)
          throw new InputError({ ...where, field: 'repo' }, 'no snapshot and no repo/base_commit');
        if (!this.options.reposDir)
          throw new InputError({ ...where, field: 'dockerless.files' }, 'no snapshot; pass --repos DIR');
        const mirror = findMirror(this.options.reposDir, spec.repo);
        if (!mirror)
          throw new InputError(
            { ...where, field: 'repo' },
            `no git mirror of ${spec.repo} under ${this.options.reposDir}`,
          );
        await checkoutFromMirror(mirror, spec.baseCommit, workdir);
      }
      const baseSha = entry ? entry.baseCommit : await commitBase(workdir);
      const toolInstall = context.tool ? await installTool(context.tool) : undefined;
      if (sandbox?.identity) {
        const { uid, gid } = sandbox.identity;
        // The folders berth just made, empty and untouched by anything else: no process needed.
        for (const dir of BERTH_MADE_DIRS) await chown(join(root, dir), uid, gid);
        // A repository made from an entry is the uid's already (copied as the uid, or idmapped).
        if (!entry) await handOver(workdir, sandbox.identity);
      }
      const asRoot = isRoot && !sandbox?.identity;
      const record = new LocalLimits(limits, limitsRecord(limits, notCapped, asRoot));
      const environment = new LocalEnvironment(
        root,
        workdir,
        method,
        baseSha,
        this.options.keep,
        sandbox,
        record,
        capped,
        restored?.mounts,
      );
      if (toolInstall) environment.toolInstall = toolInstall;
      if (key && entry?.goCache) environment.goEntry = key;
      if (restored?.goVerify) environment.goVerify = restored.goVerify;
      if (restored?.repoUpper) environment.repoUpper = restored.repoUpper;
      if (key) {
        const install = spec.install?.trim() ?? '';
        environment.cacheOn(key, entry !== undefined, install, restored);
        // Nothing to install: the materialised repository is the entry (the engine saves after an install).
        if (!entry && install === '') await environment.installCache?.save();
      }
      return environment;
    } catch (error) {
      if (sandbox) releaseIdentity(sandbox.slot);
      await unmountAll(restored?.mounts ?? []);
      if (capped) await releaseFolder(root);
      await rm(root, { recursive: true, force: true });
      throw error;
    }
  }
}

/** A command's first line, shortened, for the trace (src/util/trace.ts). */
function traceLabel(command: string): string {
  const line = command.trimStart().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
