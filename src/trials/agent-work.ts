/**
 * The work of an agent that acted in its environment, taken out as a diff against the base
 * commit WITHOUT running anything of the agent's, for a verifier that grades it in a fresh
 * environment of the task (`Verifier.gradesInFreshEnvironment`: the multilingual verifier).
 *
 * Running git in the agent's own repository runs what the agent put there: `core.fsmonitor`
 * and hooks (trust9, `multilingual-go-git-hook-forge`: the hook planted a forged Go test result
 * again after berth emptied the cache), filters named in its config, and objects it rewrote
 * under the same id (gitreset, `multilingual-go-forged-base-object`: `git checkout <base> -- f`
 * put back the agent's copy of a base test file). So:
 *
 * 1. the agent's environment is halted (`Environment.halt`: Docker's container paused, its
 *    processes frozen; locally every command still running killed with its pid namespace and
 *    cgroup), so nothing of the agent's writes its folder while it is read (trust13: a writer
 *    the agent left running applied a fix after the agent returned, before the copy). The
 *    engine halts it as soon as the agent returns; this call makes sure;
 * 2. the agent's work folder is carried (`carryFolder`), as a tar stream, into a side folder of
 *    the FRESH environment, inside its `.git` (`Environment.archive` / `extractArchive`: Docker's engine,
 *    from container to container; locally berth's own `tar` on the host and a sandboxed `tar -x`
 *    as the fresh environment's uid). Nothing runs in the agent's environment. The stream is
 *    bounded by the environment's disk limit (src/util/tar-bound.ts: files are stored expanded,
 *    so a sparse `truncate -s 100G` file counts 100 GiB and is refused at its header, before a
 *    byte of it is written): past it, AgentWorkError, the agent's failure;
 * 3. there, git compares it with the base: the fresh environment's `.git` (config, objects, no
 *    hook of the agent's) is the repository, the side folder only the work tree, with an index
 *    made from the base tree and an object folder of its own (the fresh store is not written).
 *    Every `.git` (file or folder) in the side folder is removed before git runs: the top one
 *    git would never read as a repository, but one in a folder where the base has a gitlink
 *    (a submodule) it would, with its config (trust11, `multilingual-submodule-filter`: its
 *    clean filter ran as the fresh environment's uid); hooks and fsmonitor are off, the diff
 *    runs no external diff or textconv; no filter driver is named in the fresh config, so a
 *    `.gitattributes` of the agent's runs nothing;
 * 4. the side folder goes; the engine applies the diff to the fresh work folder (as a `command`
 *    agent's SWE-bench diff) and the verifier runs there.
 *
 * What the agent's work folder holds can make steps 2 and 3 fail: git refuses a `.GIT/x` entry,
 * the diff passes 50 MiB, a copy too big for the fresh environment's disk. That is the agent's
 * failure (`AgentWorkError`: reward 0, never retried by default), not a generic error that a
 * retry (`-r`) or a resume would run again: an agent that could force one would get another
 * attempt whenever it liked. A carry that fails for berth's or the engine's reasons (the
 * engine's error, the host's disk, the copy's time bound) is `EnvironmentCopyError`, retryable
 * (`carryFailure`). berth's own steps (the side folder, the base index) stay errors.
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { pipeline } from 'node:stream';
import { agentDiff, GIT } from '../agents/command.ts';
import { type Environment, EnvironmentCopyError, type ExecOptions } from '../environments/environment.ts';
import { DEFAULT_LIMITS } from '../sandbox/limits.ts';
import { shellQuote } from '../util/shell.ts';
import { boundTar, TarBoundError } from '../util/tar-bound.ts';
import { AgentWorkError } from './errors.ts';

/**
 * The agent's changes in `agent` (its work folder) against `base`, as `git add -A && git diff
 * --cached --binary` gives them, computed in `fresh` (an environment of the same task in which
 * nothing of the agent's ran, whose repository holds `base`). `agent` is halted first.
 * @throws AgentWorkError when what the agent's work folder holds keeps it from being carried
 *   into `fresh` (its copy passes `agent`'s disk limit, 10 GiB when it has none, or fills
 *   `fresh`'s: `carryFailure`), a `.git` in it cannot be removed, git fails on it or the diff
 *   passes 50 MiB; EnvironmentCopyError (CopyTimeoutError past the copy's time bound) when the
 *   carry fails for berth's or the engine's reasons; Error when an environment has no way to
 *   carry a folder, or berth's own side folder or base index fails.
 */
export async function takeAgentWork(
  agent: Environment,
  fresh: Environment,
  base: string,
  signal?: AbortSignal,
): Promise<string> {
  if (!agent.archive || !agent.halt || !fresh.extractArchive)
    throw new Error(`a ${agent.kind} environment cannot carry the agent's work folder into a fresh one`);
  await agent.halt();
  const repo = fresh.workdir.replace(/\/+$/, '');
  const gitDir = `${repo}/.git`;
  const side = `${gitDir}/berth-agent-work-${randomBytes(6).toString('hex')}`;
  const tree = posix.join(side, posix.basename(agent.workdir.replace(/\/+$/, '')) || 'work');
  const common: ExecOptions = { timeoutSec: 300, ...(signal ? { signal } : {}) };
  const made = await fresh.exec(`mkdir -p -- ${shellQuote(`${side}/objects`)}`, common);
  if (made.exitCode !== 0) throw new Error(`cannot make ${side}: ${made.output.slice(-500)}`);
  try {
    await carryFolder(agent, agent.workdir, fresh, side, signal);
    // No repository of the agent's in its copy: where the base has a gitlink and the copy a
    // `.git` there, `git add` runs `git status` in that folder with that `.git`'s config (its
    // filters run). A gitlink with no repository behind it stays as the base has it. A folder
    // this uid cannot read hides its `.git` from find and from git alike; one find still sees
    // is an error.
    const q = shellQuote(tree);
    const nested = await fresh.exec(
      `find ${q} -name .git -prune -exec rm -rf -- {} + 2>/dev/null; left=$(find ${q} -name .git -print 2>/dev/null | head -n 3); test -z "$left" || { printf '%s\n' "$left"; exit 1; }`,
      common,
    );
    if (nested.exitCode !== 0)
      throw new AgentWorkError(
        `the repositories in its work folder cannot be removed: ${nested.output.slice(-500)}`,
      );
    // The fresh repository, the agent's files as its work tree; no config of the agent's.
    const env: Record<string, string> = {
      GIT_DIR: gitDir,
      GIT_WORK_TREE: tree,
      GIT_INDEX_FILE: `${side}/index`,
      GIT_OBJECT_DIRECTORY: `${side}/objects`,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: `${gitDir}/objects`,
    };
    const inTree: Pick<Environment, 'exec'> = {
      exec: (command, options = {}) => fresh.exec(command, { ...options, cwd: tree, env }),
    };
    // The index starts at the base: a tracked file an ignore rule matches stays tracked.
    const index = await inTree.exec(`${GIT} read-tree ${shellQuote(base)}`, common);
    if (index.exitCode !== 0)
      throw new Error(`cannot read the base ${base} in the fresh environment: ${index.output.slice(-500)}`);
    return await agentDiff(inTree, base, signal);
  } finally {
    await fresh.exec(`rm -rf -- ${shellQuote(side)}`, common).catch(() => undefined);
  }
}

/**
 * Carries the folder `path` of `from` into the folder `into` of `to` (made when missing), as a
 * tar stream from one environment to the other (`Environment.archive` / `extractArchive`):
 * nothing runs in `from`. The stream is bounded by `from`'s disk limit (10 GiB when it has
 * none; sparse files count at their full size, src/util/tar-bound.ts), in time by the
 * environments (`CopyTimeoutError`). The one carry of an agent's work folder: into a side folder
 * of a fresh environment (`takeAgentWork`), and into a fresh environment to verify in
 * (src/trials/verifier-environment.ts).
 * @throws AgentWorkError or EnvironmentCopyError when the carry fails, by whose failure it is
 *   (`carryFailure`; the error itself once `signal` aborted); Error when `from` cannot send a
 *   folder or `to` cannot receive one
 */
export async function carryFolder(
  from: Environment,
  path: string,
  to: Environment,
  into: string,
  signal?: AbortSignal,
): Promise<void> {
  if (!from.archive) throw new Error(`a ${from.kind} environment cannot carry a folder out`);
  if (!to.extractArchive) throw new Error(`a ${to.kind} environment cannot receive a folder`);
  try {
    const bounded = boundTar(from.limits?.record.disk_bytes ?? DEFAULT_LIMITS.diskBytes);
    // A failure of either ends both (the producer stops reading); extractArchive throws it.
    pipeline(await from.archive(path), bounded, () => undefined);
    await to.extractArchive(into, bounded);
  } catch (error) {
    if (signal?.aborted) throw error;
    throw await carryFailure(error, to);
  }
}

/**
 * Whose failure a failed carry of the agent's work folder is. The agent's (`AgentWorkError`:
 * reward 0, not retried by default) when what its folder holds caused it: the copy passed the
 * disk limit (`TarBoundError`: sparse files count at their full size), it filled the fresh
 * environment's disk (the fresh environment's own disk limit hit: its writable layer watched
 * past the limit, or a "no space" where that limit is the disk's own size, a storage quota or
 * a capped tmpfs), a name too long for the fresh side folder, a file berth's `tar` may not
 * read (local). Else berth's or the engine's (`EnvironmentCopyError`, retryable): the engine's
 * error, the host's disk full, the copy's time bound (`CopyTimeoutError`).
 *
 * The disk limit counts the whole work folder, the base repository's files too: the copy is
 * written whole into the fresh environment's disk (a container's writable layer, where the
 * image's copy of the repository does not count), so a copy within the limit fits a fresh
 * container of the same limit. Locally the fresh environment's capped folder holds the base
 * repository beside the copy: a copy within the limit that fills it is the agent's (above).
 */
async function carryFailure(error: unknown, fresh: Environment): Promise<Error> {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof TarBoundError)
    return new AgentWorkError(
      `${message}, the environment's disk limit (a sparse file counts at its full size)`,
    );
  if (error instanceof EnvironmentCopyError) return error;
  const hits = (await fresh.limits?.takeHits().catch(() => [])) ?? [];
  const ownDisk = ['storage-opt', 'tmpfs'].includes(fresh.limits?.record.enforced_by.disk ?? 'none');
  if (hits.includes('disk') || (ownDisk && /no space left|ENOSPC|quota exceeded/i.test(message)))
    return new AgentWorkError(
      `its work folder does not fit the fresh environment's disk limit of ${fresh.limits?.record.disk_bytes} bytes: ${message.slice(-300)}`,
    );
  // A path the agent made too long for the side folder; a file of the agent's berth's `tar` (local)
  // may not read.
  if (/name too long|ENAMETOOLONG|Cannot open: Permission denied/i.test(message))
    return new AgentWorkError(`its work folder could not be carried into the fresh environment: ${message}`);
  return new EnvironmentCopyError(
    `the agent's work folder could not be carried into the fresh environment: ${message}`,
  );
}
