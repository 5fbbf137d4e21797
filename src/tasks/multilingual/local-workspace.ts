/**
 * Runs multilingual tasks on this machine, in a temporary folder, for the
 * bundled examples (their repositories ship in `environment/repo/`).
 *
 * This is a stand-in until the trial engine's local and Docker environments
 * take over (src/environments/): it implements the same `Environment`
 * interface with the least needed (bash -c, a timeout that kills the process
 * group, an output cap). It does NOT isolate the network; results record
 * `isolated: false`.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Environment, ExecOptions, ExecResult } from '../../environments/environment.ts';
import { type CopyLimits, type CopyReport, copyInBeneath, copyOutBeneath } from '../../util/safe-fs.ts';

/**
 * Identity and date of the base commit. With them, the same files give the same
 * commit id on every machine (and in the task's Dockerfile, which uses the same values).
 */
export const BASE_COMMIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'berth',
  GIT_AUTHOR_EMAIL: 'berth@example.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'berth',
  GIT_COMMITTER_EMAIL: 'berth@example.invalid',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** The shell command that turns a folder into a one-commit repository (also used in the Dockerfiles). */
export const BASE_COMMIT_SCRIPT =
  'git init -q && git config core.autocrlf false && git add -A && git commit -q --no-gpg-sign -m base && git rev-parse HEAD';

export class TempDirEnvironment implements Environment {
  readonly kind = 'local-temp';
  readonly isolated = false;

  private constructor(
    readonly root: string,
    readonly workdir: string,
  ) {}

  /** Copies `repoDir` into a fresh temporary folder and commits it as the base. */
  static async fromRepo(repoDir: string): Promise<{ env: TempDirEnvironment; baseCommit: string }> {
    const root = await mkdtemp(join(tmpdir(), 'berth-ml-'));
    const workdir = join(root, 'repo');
    await cp(repoDir, workdir, { recursive: true });
    const env = new TempDirEnvironment(root, workdir);
    const result = await env.exec(BASE_COMMIT_SCRIPT, { env: BASE_COMMIT_ENV, timeoutSec: 60 });
    if (result.exitCode !== 0) {
      await env.stop();
      throw new Error(`cannot commit the base repository: ${result.output}`);
    }
    return { env, baseCommit: result.output.trim().split('\n').pop() as string };
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const started = process.hrtime.bigint();
    const cap = options.maxOutputBytes ?? 16 * 1024 * 1024;
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', command], {
        cwd: options.cwd ?? this.workdir,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', ...options.env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const take = (chunk: Buffer) => {
        if (size >= cap) {
          truncated = true;
          return;
        }
        const part = chunk.subarray(0, cap - size);
        if (part.length < chunk.length) truncated = true;
        chunks.push(part);
        size += part.length;
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = options.timeoutSec
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, options.timeoutSec * 1000)
        : undefined;
      options.signal?.addEventListener('abort', killGroup, { once: true });
      child.on('error', reject);
      child.on('close', async (code, signal) => {
        if (timer) clearTimeout(timer);
        killGroup();
        let output = Buffer.concat(chunks).toString('utf8');
        if (truncated) output += `\n[berth: output truncated at ${cap} bytes]\n`;
        if (options.outputFile) await writeFile(options.outputFile, output);
        resolve({
          exitCode: code,
          ...(signal ? { signal } : {}),
          timedOut,
          output,
          truncated,
          durationSec: Number(process.hrtime.bigint() - started) / 1e9,
        });
      });
    });
  }

  /** `environmentPath` relative to the root; throws outside it. */
  private belowRoot(path: string): string {
    const rel = relative(this.root, resolve(this.workdir, path));
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
      throw new Error(`${path} is outside ${this.root}`);
    return rel;
  }

  async upload(hostPath: string, environmentPath: string): Promise<void> {
    await copyInBeneath(hostPath, this.root, this.belowRoot(environmentPath));
  }

  async download(environmentPath: string, hostPath: string, limits?: CopyLimits): Promise<CopyReport> {
    return copyOutBeneath(this.root, this.belowRoot(environmentPath), hostPath, limits);
  }

  async stop(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}
