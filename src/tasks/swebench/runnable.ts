/**
 * Checks, before any trial starts, that a SWE-bench task can run on the local
 * environment: it needs a repository (a snapshot in the row, or a git mirror
 * under `--repos` holding `base_commit`) and a test command.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { findParser, parserNames } from '../../parsers/registry.ts';
import type { Task } from '../task.ts';

/** One reason a task cannot run, with the row field it concerns. */
export interface RunnableProblem {
  field: string;
  message: string;
}

/**
 * Finds the git directory of a mirror of `owner/name` under `reposDir`: tries
 * `owner__name`, `owner/name` (each with or without `.git`), bare or with a `.git` folder.
 * @returns the git directory, or undefined when none exists.
 */
export function findMirror(reposDir: string, repo: string): string | undefined {
  const [owner, name] = repo.split('/');
  if (!owner || !name) return undefined;
  const candidates = [
    `${owner}__${name}`,
    `${owner}__${name}.git`,
    join(owner, name),
    join(owner, `${name}.git`),
  ];
  for (const candidate of candidates) {
    const dir = join(reposDir, candidate);
    if (existsSync(join(dir, '.git'))) return join(dir, '.git');
    if (existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'objects'))) return dir;
  }
  return undefined;
}

/** True when `commit` names a commit in the git directory. */
export async function hasCommit(gitDir: string, commit: string): Promise<boolean> {
  const result = await execa('git', ['--git-dir', gitDir, 'cat-file', '-e', `${commit}^{commit}`], {
    reject: false,
  });
  return result.exitCode === 0;
}

/**
 * Lists why a SWE-bench task cannot run on the local environment (empty when it can).
 * @param options.reposDir the `--repos` folder of git mirrors, if given.
 */
export async function localRunProblems(
  task: Task,
  options: { reposDir?: string } = {},
): Promise<RunnableProblem[]> {
  const problems: RunnableProblem[] = [];
  const env = task.environment;
  // A task folder's repository (a multilingual task placed locally) is copied in as it is.
  if (env.kind !== 'local' || env.folder) return problems;
  if (!env.snapshot) {
    if (!env.repo) {
      problems.push({
        field: 'repo',
        message: 'the row has no dockerless snapshot and no `repo` to find a mirror of',
      });
    } else if (!env.baseCommit) {
      problems.push({
        field: 'base_commit',
        message: 'the row has no dockerless snapshot and no base_commit to check out',
      });
    } else if (!options.reposDir) {
      problems.push({
        field: 'dockerless.files',
        message: `the row carries no repository snapshot; pass --repos DIR holding a git mirror of ${env.repo} (named ${env.repo.replace('/', '__')} or ${env.repo})`,
      });
    } else {
      const mirror = findMirror(options.reposDir, env.repo);
      if (!mirror) {
        problems.push({
          field: 'repo',
          message: `no git mirror of ${env.repo} under ${options.reposDir} (looked for ${env.repo.replace('/', '__')} and ${env.repo})`,
        });
      } else if (!(await hasCommit(mirror, env.baseCommit))) {
        problems.push({
          field: 'base_commit',
          message: `commit ${env.baseCommit} is not in the mirror ${mirror}`,
        });
      }
    }
  }
  if (
    task.verifier.kind === 'swebench' &&
    task.verifier.parser !== undefined &&
    !findParser(task.verifier.parser)
  ) {
    problems.push({
      field: 'dockerless.parser',
      message: `unknown parser ${JSON.stringify(task.verifier.parser)}; known: ${parserNames().join(', ')}`,
    });
  }
  if (task.verifier.kind === 'swebench' && task.verifier.testCommand.trim() === '') {
    problems.push({
      field: 'dockerless.test_cmd',
      message:
        "the row has no test command, and SWE-bench's per-repository specs give one only for a `repo` and `version` they know; add dockerless.test_cmd with {tests}",
    });
  }
  return problems;
}
