/**
 * A scratch checkout for dataset authoring: the repository at its base commit
 * in a temporary folder, where patches are applied and the tests run. It is
 * materialised exactly as the local environment does it
 * (`environments/local/materialise.ts`: the same files, the same single base
 * commit with berth's fixed identity and date, so a snapshot's `base_commit`
 * is the sha a trial sees). The tests run here are the author's own input, so
 * they run on the host without the trial engine's isolation.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import {
  BASE_COMMIT_ENV,
  checkoutFromMirror,
  commitBase,
  writeSnapshot,
} from '../environments/local/materialise.ts';
import { chunksOf } from '../parsers/common.ts';
import { DETECT_HEAD_BYTES, detectParser, getParser, listParsers } from '../parsers/registry.ts';
import type { ParseResult, TestStatus } from '../parsers/types.ts';
import { killProcessGroup } from '../sandbox/process.ts';
import type { RepositorySnapshot } from '../tasks/task.ts';

const GIT_ENV = { ...BASE_COMMIT_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };

/** Runs git in `cwd`; returns stdout. Throws (execa's error) on a non-zero exit. */
export async function git(cwd: string, args: string[]): Promise<string> {
  const result = await execa('git', ['-c', 'core.autocrlf=false', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    env: GIT_ENV,
    stripFinalNewline: false,
    maxBuffer: 1 << 30,
  });
  return result.stdout;
}

/** Where the base comes from: files (a DockerLess snapshot) or a git repository at a commit. */
export type BaseSource =
  | { kind: 'files'; snapshot: RepositorySnapshot }
  | { kind: 'git'; repoDir: string; commit: string };

export class Workspace {
  private constructor(
    readonly dir: string,
    /**
     * The row's base_commit: the snapshot's deterministic commit, or the upstream
     * commit of a git base.
     */
    readonly baseCommit: string,
    /** The local commit holding the base files (what `reset` returns to). */
    private readonly head: string,
  ) {}

  /** Materialises the base in a fresh temporary folder. */
  static async create(base: BaseSource): Promise<Workspace> {
    const root = await mkdtemp(join(tmpdir(), 'berth-dataset-'));
    const dir = join(root, 'repo');
    try {
      await mkdir(dir);
      if (base.kind === 'files') await writeSnapshot(dir, base.snapshot);
      else await checkoutFromMirror(base.repoDir, base.commit, dir);
      const head = await commitBase(dir);
      return new Workspace(dir, base.kind === 'files' ? head : base.commit, head);
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      throw error;
    }
  }

  /** Puts the working tree back to the base (tracked and untracked changes dropped). */
  async reset(): Promise<void> {
    await git(this.dir, ['reset', '-q', '--hard', this.head]);
    await git(this.dir, ['clean', '-q', '-fdx']);
  }

  /** Applies a patch with `git apply` (no fallback: authored patches must apply exactly). */
  async apply(patch: string, options: { check?: boolean } = {}): Promise<{ ok: boolean; log: string }> {
    if (patch.trim() === '') return { ok: true, log: '' };
    const result = await execa('git', ['apply', '--verbose', ...(options.check ? ['--check'] : []), '-'], {
      cwd: this.dir,
      input: patch.endsWith('\n') ? patch : `${patch}\n`,
      reject: false,
      all: true,
    });
    return { ok: result.exitCode === 0, log: result.all ?? '' };
  }

  /** The diff of the working tree (new files included) against the base. */
  async diff(): Promise<string> {
    await git(this.dir, ['add', '-A']);
    const diff = await git(this.dir, ['diff', '--cached', '--no-color', '--no-ext-diff', this.head]);
    await git(this.dir, ['reset', '-q']);
    return diff;
  }

  /** Writes files (and links, executable bits) over the working tree. */
  async overlay(snapshot: RepositorySnapshot): Promise<void> {
    await writeSnapshot(this.dir, snapshot);
  }

  /**
   * Runs a shell command in the working tree, in its own process group killed
   * whole after `timeoutSec` seconds. Returns stdout and stderr interleaved.
   */
  async run(
    command: string,
    timeoutSec: number,
  ): Promise<{ exitCode: number | null; output: string; timedOut: boolean }> {
    const child = execa(command, {
      cwd: this.dir,
      shell: '/bin/bash',
      detached: true,
      reject: false,
      all: true,
      stdin: 'ignore',
      env: { PYTHONDONTWRITEBYTECODE: '1', NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' },
      maxBuffer: 256 << 20,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killProcessGroup(child.pid);
    }, timeoutSec * 1000);
    const result = await child;
    clearTimeout(timer);
    return { exitCode: result.exitCode ?? null, output: result.all ?? '', timedOut };
  }

  async dispose(): Promise<void> {
    await rm(join(this.dir, '..'), { recursive: true, force: true });
  }
}

/** No test-report parser recognises a log (tests that could not even be collected print none). */
export class UnrecognisedLogError extends Error {
  override readonly name = 'UnrecognisedLogError';
}

/**
 * Parses a test log with the parser registry: the parser named `name` (or an
 * alias) when given, else the one `detectParser` picks from the first 64 KiB.
 * @throws UsageError for an unknown name; UnrecognisedLogError when no parser recognises the log.
 */
export async function parseLog(log: string, name?: string): Promise<ParseResult> {
  const parser = name ? getParser(name) : detectParser(log.slice(0, DETECT_HEAD_BYTES));
  if (!parser) {
    throw new UnrecognisedLogError(
      `no test-report parser recognises this log (known: ${listParsers()
        .map((p) => p.name)
        .join(', ')}); name one with "parser" in the spec`,
    );
  }
  return parser.parse(chunksOf(log), { sourceName: 'test log' });
}

/** Status per test id from a parse result. */
export function statusMap(result: ParseResult): Map<string, TestStatus> {
  return new Map(result.tests.map((test) => [test.id, test.status]));
}
