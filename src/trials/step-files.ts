/**
 * Files of a step of a multi-step trial: its `workdir/` uploaded into the environment, the
 * tests folders merged for its verifier, its outputs moved to `steps/<name>/`.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../environments/environment.ts';
import { ownedTempDir } from '../util/leftovers.ts';
import { shellQuote } from '../util/shell.ts';
import { StepSetupError } from './errors.ts';
import type { StepPlan } from './plan.ts';
import { withDefaultUser } from './views.ts';

/** Limit of a step's `setup.sh`, in seconds. */
const STEP_SETUP_TIMEOUT_SEC = 600;

/** Moves the children of `from` into `to` (replacing), leaving `from` empty (Harbor's `move_dir_contents`). */
export async function moveContents(from: string, to: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(from);
  } catch {
    return;
  }
  if (names.length === 0) return;
  await mkdir(to, { recursive: true });
  for (const name of names) {
    await rm(join(to, name), { recursive: true, force: true });
    await rename(join(from, name), join(to, name));
  }
}

/** Copies several tests folders into one (later ones over earlier ones), as Harbor uploads them in turn to /tests. */
export async function mergedTestsDir(dirs: string[]): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  if (dirs.length === 1 && dirs[0]) return { dir: dirs[0], cleanup: async () => {} };
  const dir = await ownedTempDir('berth-tests-');
  for (const d of dirs) await cp(d, dir, { recursive: true, force: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Uploads a step's `workdir/` into the working directory (keeping the folder's owner and mode
 * as the image made them, the uploaded files given to its owner) and runs its `setup.sh` as
 * the agent user.
 * @throws StepSetupError when setup.sh exits non-zero
 */
export async function uploadWorkdir(
  env: Environment,
  step: StepPlan,
  trialDir: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const dir = step.workdirDir as string;
  const wd = shellQuote(env.workdir);
  const before = await env.exec(`stat -c '%u:%g %a' ${wd}`, { user: 'root', cwd: '/', timeoutSec: 30 });
  await env.upload(dir, env.workdir);
  const [owner, mode] = before.output.trim().split(' ');
  if (before.exitCode === 0 && owner && mode) {
    const names = (await readdir(dir)).map((n) => shellQuote(`${env.workdir.replace(/\/+$/, '')}/${n}`));
    await env.exec(`chown ${owner} ${wd} && chmod ${mode} ${wd} && chown -R ${owner} ${names.join(' ')}`, {
      user: 'root',
      cwd: '/',
      timeoutSec: 60,
    });
  }
  if (!existsSync(join(dir, 'setup.sh'))) return;
  const setup = await withDefaultUser(env, step.agentUser).exec(
    `bash ${shellQuote(`${env.workdir.replace(/\/+$/, '')}/setup.sh`)}`,
    {
      timeoutSec: STEP_SETUP_TIMEOUT_SEC,
      outputFile: join(trialDir, 'agent', 'setup.log'),
      ...(signal ? { signal } : {}),
    },
  );
  if (setup.exitCode !== 0)
    throw new StepSetupError(
      `setup.sh exited with code ${setup.exitCode}: ${setup.output.trim().split('\n').slice(-3).join(' | ')}`,
    );
}
