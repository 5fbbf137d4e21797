/**
 * Applies an agent's patch to the repository in an environment with a fallback
 * chain, recording the method that worked (SWE-bench's chain, hardened):
 * `git apply --verbose`, `git apply --verbose --3way`,
 * `patch --batch --forward --fuzz=5 -p1`. Between attempts the files the patch
 * touches are restored to the base commit, so a partial application never leaks
 * into the next attempt. A patch that applies no way is an outcome, not a crash.
 */
import type { Environment } from '../environments/environment.ts';
import { checkSnapshotPath } from '../tasks/swebench/load.ts';
import { touchedPaths } from '../util/patch-files.ts';
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

const ATTEMPTS: { method: ApplyMethod; command: string }[] = [
  { method: 'git apply', command: 'git -c core.hooksPath=/dev/null apply --verbose -' },
  { method: 'git apply --3way', command: 'git -c core.hooksPath=/dev/null apply --verbose --3way -' },
  {
    method: 'patch --fuzz=5',
    command: 'patch --batch --forward --fuzz=5 -p1 --no-backup-if-mismatch -r /dev/null',
  },
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
  const input = normalisePatch(patch);
  const base = options.base ?? 'HEAD';
  const paths = touchedPaths(input).filter((p) => checkSnapshotPath(p) === undefined);
  let log = '';
  for (const attempt of ATTEMPTS) {
    const result = await environment.exec(attempt.command, {
      input,
      timeoutSec: 120,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    log += `$ ${attempt.command}\n${result.output}${result.output.endsWith('\n') || result.output === '' ? '' : '\n'}exit ${result.exitCode}\n\n`;
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
