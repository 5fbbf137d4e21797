/**
 * The local environment: a fresh temporary folder on this machine holding the
 * task's repository committed as its single base commit. Commands run in their
 * own process group with a timeout that kills the group; untrusted commands run
 * without network where the machine allows it (see isolation.ts).
 */
import { access, cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { InputError } from '../../errors.ts';
import { findMirror } from '../../tasks/swebench/runnable.ts';
import type { NetworkPolicy } from '../../tasks/task.ts';
import type {
  Environment,
  EnvironmentProvider,
  EnvironmentStartContext,
  ExecOptions,
  ExecResult,
} from '../environment.ts';
import { checkIsolationMethod, type IsolationMethod, isolationPrefix, probeIsolation } from './isolation.ts';
import { checkoutFromMirror, commitBase, writeSnapshot } from './materialise.ts';
import { runProcess } from './process.ts';

/** Host variables never passed to commands (they look like credentials). */
const SECRET_NAME = /(TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|CREDENTIAL|PRIVATE)/i;

/** The environment commands get: the host's, minus credential-like variables, plus `extra`. */
export function commandEnv(extra?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !SECRET_NAME.test(key)) env[key] = value;
  }
  return { ...env, ...extra };
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
  /** Keep the temporary folder after the trial (for debugging). */
  keep?: boolean;
}

export class LocalEnvironment implements Environment {
  readonly kind = 'local';
  private stopped = false;
  /** Aborted by stop(): every running command's process group is killed. */
  private readonly stopping = new AbortController();

  constructor(
    /** Temporary root; the repository is `<root>/repo`. */
    readonly root: string,
    readonly workdir: string,
    private readonly isolationMethod: IsolationMethod | undefined,
    /** Sha of the base commit berth made. */
    readonly baseSha: string,
    private readonly keep = false,
    /** Content of `.git/config` when the repository was made (see gitConfigUnchanged). */
    private readonly gitConfig?: string,
  ) {}

  get isolated(): boolean {
    return this.isolationMethod !== undefined;
  }

  /** How untrusted commands are isolated (`bwrap`, `unshare`, `unshare-user`), if at all. */
  get isolationMethodName(): string | undefined {
    return this.isolationMethod;
  }

  private inside(path: string): string {
    return isAbsolute(path) ? path : resolve(this.workdir, path);
  }

  /**
   * Runs a shell command (`bash -c`). Network: `options.network` or, by default,
   * none when isolation is available. `options.user` is not supported locally (ignored).
   */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.stopped) throw new Error('the environment is stopped');
    const network: NetworkPolicy = options.network ?? { mode: 'no-network' };
    const argv = ['bash', '-c', command];
    const isolate =
      network.mode !== 'public' &&
      this.isolationMethod !== undefined &&
      !(options.trusted && (await this.gitConfigUnchanged()));
    const wrapped =
      isolate && this.isolationMethod ? [...isolationPrefix(this.isolationMethod), ...argv] : argv;
    const result = await runProcess(wrapped, {
      cwd: options.cwd ? this.inside(options.cwd) : this.workdir,
      env: commandEnv(options.env),
      ...(options.timeoutSec !== undefined ? { timeoutSec: options.timeoutSec } : {}),
      ...(options.outputFile ? { outputFile: options.outputFile } : {}),
      ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
      ...(options.input !== undefined ? { input: options.input } : {}),
      signal: options.signal ? AbortSignal.any([options.signal, this.stopping.signal]) : this.stopping.signal,
    });
    return result;
  }

  /**
   * True when `.git/config` is still what berth wrote when it made the repository. A trusted
   * command (git bookkeeping) runs unwrapped only then: a changed config could make git run
   * commands of its own (core.fsmonitor, filter drivers, ...).
   */
  private async gitConfigUnchanged(): Promise<boolean> {
    if (this.gitConfig === undefined) return false;
    const now = await readFile(join(this.workdir, '.git', 'config'), 'utf8').catch(() => undefined);
    // A `commondir` file would make git read another folder's config instead.
    const commondir = await access(join(this.workdir, '.git', 'commondir')).then(
      () => true,
      () => false,
    );
    return now === this.gitConfig && !commondir;
  }

  async upload(hostPath: string, environmentPath: string): Promise<void> {
    await cp(hostPath, this.inside(environmentPath), { recursive: true, force: true });
  }

  async download(environmentPath: string, hostPath: string): Promise<void> {
    await cp(this.inside(environmentPath), hostPath, { recursive: true, force: true });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    if (!this.keep) await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
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
    const spec = context.task.environment;
    if (spec.kind !== 'local') throw new Error(`the local provider cannot start a ${spec.kind} environment`);
    const parent = this.options.tmpRoot ?? tmpdir();
    await mkdir(parent, { recursive: true });
    const safeJob = context.jobId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
    const root = await mkdtemp(join(parent, `berth-${safeJob}-`));
    const workdir = join(root, 'repo');
    try {
      await mkdir(workdir);
      if (spec.snapshot) {
        await writeSnapshot(workdir, spec.snapshot);
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
      const baseSha = await commitBase(workdir);
      const wanted = this.options.isolation ?? 'auto';
      const method =
        wanted === 'off'
          ? undefined
          : wanted === 'auto'
            ? (await probeIsolation()).method
            : (await checkIsolationMethod(wanted)) === undefined
              ? wanted
              : undefined;
      const gitConfig = await readFile(join(workdir, '.git', 'config'), 'utf8');
      return new LocalEnvironment(root, workdir, method, baseSha, this.options.keep, gitConfig);
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      throw error;
    }
  }
}
