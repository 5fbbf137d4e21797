/**
 * Applies an agent's patch to the repository in an environment with a fallback
 * chain, recording the method that worked (SWE-bench's chain, hardened):
 * `git apply --verbose`, `git apply --verbose --3way`,
 * `patch --batch --forward --fuzz=5 -p1`. Between attempts the files the patch
 * touches are restored to the base commit, so a partial application never leaks
 * into the next attempt. A patch that applies no way is an outcome, not a crash.
 *
 * Only the text berth's diff parser placed is applied (`placedText`): its unified sections'
 * allowed header lines and hunks. GNU `patch` also reads context and normal diffs and ed scripts,
 * and a context-diff section after the last hunk created a conftest.py that none of berth's
 * checks of "the files the patch changed" listed (breaker10 F3, `patch-context-diff-conftest`).
 * The SWE-bench harness applies the whole text; for a patch whose every change is in unified
 * sections (git's output, every gold patch) the result is the same.
 *
 * A patch never writes the repository's `.git` (trust10, `patch-writes-git-config`): `git apply`
 * refuses such a path, but GNU `patch` does not, and a `.git/config` it wrote (a smudge or clean
 * filter) ran in the verifier's own git commands on the test files. A patch that names a path
 * in `.git`, an absolute one or one with `..` is refused before any attempt; `patch` runs with
 * `.git` moved aside, and a `.git` it made (from a diff format berth does not parse) refuses it.
 * So is a patch that names a path whose bytes are not UTF-8 (`UndecodablePathError`): berth
 * could neither restore nor check that file (trust11).
 */
import { randomBytes } from 'node:crypto';
import type { Environment } from '../environments/environment.ts';
import { checkSnapshotPath } from '../tasks/swebench/load.ts';
import { placedText, UndecodablePathError } from '../util/patch-files.ts';
import { shellQuote, unlinkLeadingSymlinks } from '../util/shell.ts';

export type ApplyMethod = 'git apply' | 'git apply --3way' | 'patch --fuzz=5';

export interface ApplyOutcome {
  /** True when some method applied the patch. */
  applied: boolean;
  method?: ApplyMethod;
  /** Every attempt's command and output, in order. */
  log: string;
}

/** Normalises a patch: LF line ends are kept as they are; one trailing newline is ensured. */
export function normalisePatch(patch: string): string {
  return patch.endsWith('\n') ? patch : `${patch}\n`;
}

/** True when a patch has no change in it (empty or whitespace only). */
export function isEmptyPatch(patch: string | undefined): boolean {
  return patch === undefined || patch.trim() === '';
}

/** GNU patch with the repository's `.git` moved aside: what it would write there has no `.git` to go to. */
function patchCommand(): string {
  const aside = `.git.berth-aside-${randomBytes(6).toString('hex')}`;
  const patch = 'patch --batch --forward --fuzz=5 -p1 --no-backup-if-mismatch -r /dev/null';
  return [
    `if [ ! -d .git ] || [ -L .git ]; then exec ${patch}; fi`,
    `mv .git ${aside} || exit 90`,
    `${patch}; rc=$?`,
    `if [ -e .git ] || [ -L .git ]; then rm -rf .git; mv ${aside} .git; echo 'berth: the patch writes into .git: refused'; exit 91; fi`,
    `mv ${aside} .git || exit 92`,
    'exit $rc',
  ].join('\n');
}

const ATTEMPTS: { method: ApplyMethod; command: () => string }[] = [
  { method: 'git apply', command: () => 'git -c core.hooksPath=/dev/null apply --verbose -' },
  {
    method: 'git apply --3way',
    command: () => 'git -c core.hooksPath=/dev/null apply --verbose --3way -',
  },
  { method: 'patch --fuzz=5', command: patchCommand },
];

/**
 * Applies `patch` in `environment` (at its workdir) with the fallback chain.
 * @param base the commit to restore touched files to between attempts (default HEAD).
 */
export async function applyPatch(
  environment: Environment,
  patch: string,
  options: { base?: string; signal?: AbortSignal } = {},
): Promise<ApplyOutcome> {
  const base = options.base ?? 'HEAD';
  let touched: string[];
  // Only what berth's parser placed is applied: a context or normal diff, or an ed script,
  // before, between or after the unified sections, never reaches `patch` (breaker10 F3).
  let input: string;
  let dropped: number;
  try {
    ({ text: input, droppedLines: dropped, paths: touched } = placedText(normalisePatch(patch)));
  } catch (error) {
    if (error instanceof UndecodablePathError) return { applied: false, log: `refused: ${error.message}\n` };
    throw error;
  }
  const unsafe = touched.find(
    (p) => p.startsWith('/') || p.split('/').some((part) => part === '..' || part.toLowerCase() === '.git'),
  );
  if (unsafe !== undefined)
    return { applied: false, log: `refused: the patch names ${unsafe}, in .git or outside the repository\n` };
  const paths = touched.filter((p) => checkSnapshotPath(p) === undefined);
  let log =
    dropped > 0
      ? `berth: ${dropped} line(s) of the patch outside its unified sections (before the first, between header lines, after a hunk's counted lines) are not applied\n\n`
      : '';
  if (input.trim() === '')
    return { applied: false, log: `${log}berth: the patch holds no unified diff section\n` };
  for (const attempt of ATTEMPTS) {
    const command = attempt.command();
    const result = await environment.exec(command, {
      input,
      timeoutSec: 120,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    log += `$ ${command}\n${result.output}${result.output.endsWith('\n') || result.output === '' ? '' : '\n'}exit ${result.exitCode}\n\n`;
    if (result.exitCode === 0) return { applied: true, method: attempt.method, log };
    await restore(environment, paths, base, options.signal);
  }
  return { applied: false, log };
}

/** Restores `paths` to `base` (deleting the ones base lacks) and clears the index. */
async function restore(
  environment: Environment,
  paths: string[],
  base: string,
  signal?: AbortSignal,
): Promise<void> {
  const lines = ['git reset -q', ...unlinkLeadingSymlinks(paths)];
  for (const path of paths) {
    const q = shellQuote(path);
    lines.push(
      `if git cat-file -e ${shellQuote(`${base}:${path}`)} 2>/dev/null; then rm -rf -- ${q}; git checkout -q ${shellQuote(base)} -- ${q}; else rm -rf -- ${q}; fi`,
      `rm -f -- ${shellQuote(`${path}.rej`)} ${shellQuote(`${path}.orig`)}`,
    );
  }
  await environment.exec(lines.join('\n'), { timeoutSec: 120, ...(signal ? { signal } : {}) });
}
