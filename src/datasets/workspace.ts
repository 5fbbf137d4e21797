/**
 * A scratch checkout for dataset authoring: the repository at its base commit
 * in a temporary folder, where patches are applied and the tests run. This is
 * the author's own trusted input (the tests of a fix being turned into an
 * instance), so it runs on the host without the trial engine's isolation.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { chunksOf } from '../parsers/common.ts';
import { parsers } from '../parsers/index.ts';
import type { ParseResult, TestStatus } from '../parsers/types.ts';

/** Identity and date of the commit made for a snapshot, fixed so `base_commit` is deterministic. */
export const SNAPSHOT_COMMIT_ENV = {
  GIT_AUTHOR_NAME: 'berth',
  GIT_AUTHOR_EMAIL: 'berth@localhost',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'berth',
  GIT_COMMITTER_EMAIL: 'berth@localhost',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
} as const;

const GIT_ENV = { ...SNAPSHOT_COMMIT_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };

export async function git(cwd: string, args: string[], input?: string): Promise<string> {
  const result = await execa('git', ['-c', 'core.autocrlf=false', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    env: GIT_ENV,
    input,
    stripFinalNewline: false,
    maxBuffer: 1 << 30,
  });
  return result.stdout;
}

/** Where the base comes from: files (a DockerLess snapshot) or a git repository at a commit. */
export type BaseSource =
  | { kind: 'files'; files: Record<string, string> }
  | { kind: 'git'; repoDir: string; commit: string };

export class Workspace {
  private constructor(
    readonly dir: string,
    /** The commit the working tree is at: the snapshot's deterministic commit or the repository's. */
    readonly baseCommit: string,
  ) {}

  /** Materialises the base in a fresh temporary folder. */
  static async create(base: BaseSource): Promise<Workspace> {
    const root = await mkdtemp(join(tmpdir(), 'berth-dataset-'));
    const dir = join(root, 'repo');
    try {
      if (base.kind === 'files') {
        await mkdir(dir);
        await writeFiles(dir, base.files);
        await git(dir, ['init', '-q', '-b', 'main']);
        await git(dir, ['add', '-A']);
        await git(dir, ['commit', '-q', '--no-verify', '--allow-empty', '-m', 'base']);
      } else {
        await git(root, ['clone', '-q', '--shared', '--no-checkout', base.repoDir, dir]);
        await git(dir, ['checkout', '-q', '--detach', base.commit]);
      }
      const head = (await git(dir, ['rev-parse', 'HEAD'])).trim();
      return new Workspace(dir, head);
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      throw error;
    }
  }

  /** Puts the working tree back to the base commit (tracked and untracked changes dropped). */
  async reset(): Promise<void> {
    await git(this.dir, ['reset', '-q', '--hard', this.baseCommit]);
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

  /** The diff of the working tree (new files included) against the base commit. */
  async diff(paths?: string[]): Promise<string> {
    await git(this.dir, ['add', '-A']);
    const diff = await git(this.dir, [
      'diff',
      '--cached',
      '--no-color',
      '--no-ext-diff',
      this.baseCommit,
      '--',
      ...(paths ?? []),
    ]);
    await git(this.dir, ['reset', '-q']);
    return diff;
  }

  /** Writes files over the working tree. */
  async overlay(files: Record<string, string>): Promise<void> {
    await writeFiles(this.dir, files);
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
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }, timeoutSec * 1000);
    const result = await child;
    clearTimeout(timer);
    return { exitCode: result.exitCode ?? null, output: result.all ?? '', timedOut };
  }

  async dispose(): Promise<void> {
    await rm(dirname(this.dir), { recursive: true, force: true });
  }
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const target = join(dir, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

/**
 * Parses a test log with a parser of the registry: `name` (or alias) when
 * given, else the format that `detect` scores highest on the first 64 KiB.
 * Throws when no parser is registered under that name or none recognises the log.
 */
export async function parseLog(log: string, name?: string): Promise<ParseResult> {
  const parser = name
    ? parsers.find((candidate) => candidate.name === name || candidate.aliases?.includes(name))
    : parsers
        .map((candidate) => ({ candidate, score: candidate.detect(log.slice(0, 65536)) }))
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score)[0]?.candidate;
  if (!parser) {
    throw new Error(
      name
        ? `no test-report parser named ${JSON.stringify(name)} (known: ${parsers.map((p) => p.name).join(', ') || 'none'})`
        : `no test-report parser recognises this log (known: ${parsers.map((p) => p.name).join(', ') || 'none'})`,
    );
  }
  return parser.parse(chunksOf(log), { sourceName: 'test log' });
}

/** Status per test id from a parse result. */
export function statusMap(result: ParseResult): Map<string, TestStatus> {
  return new Map(result.tests.map((test) => [test.id, test.status]));
}
