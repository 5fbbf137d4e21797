/**
 * Loads Harbor task folders (and datasets of them) as berth `Task`s.
 *
 * Layout (Harbor `TaskPaths`): `task.toml`, `instruction.md`, `environment/`
 * (a Dockerfile, a docker-compose.yaml, or nothing when `docker_image` is set),
 * `solution/solve.sh` (the oracle), `tests/test.sh` (the verifier).
 * `-p X` is a task when X holds `task.toml` and `environment/`, otherwise a
 * dataset whose immediate sub-folders are tasks, as `harbor run -p` decides.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../../errors.ts';
import { escapingSymlinks, readInputText } from '../../util/input-files.ts';
import { sampleTaskArchive } from '../multilingual/loader.ts';
import type { SkippedTask } from '../registry.ts';
import type { Task, TaskSource } from '../task.ts';
import { stripCanary } from './canary.ts';
import { type HarborTaskConfig, parseTaskToml } from './config.ts';
import { harborPlan } from './steps.ts';

/** True when `dir` looks like a Harbor task (task.toml and environment/ exist), as `Task.is_valid_dir` checks first. */
export function looksLikeHarborTask(dir: string): boolean {
  return existsSync(join(dir, 'task.toml')) && isDir(join(dir, 'environment'));
}

/** True when `dir` is a Harbor task or a folder with at least one Harbor task among its children. */
export function isHarborPath(dir: string): boolean {
  if (!isDir(dir)) return false;
  if (looksLikeHarborTask(dir)) return true;
  return childDirs(dir).some(looksLikeHarborTask);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function childDirs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => join(dir, e.name))
    .sort();
}

/**
 * Finds the dataset's base-image folder (`bases/manifest`, the Kotlin
 * Benchmark layout) in the task's parents, up to three levels up.
 */
export function findBasesDir(taskDir: string): string | undefined {
  let dir = resolve(taskDir);
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, 'bases');
    if (existsSync(join(candidate, 'manifest'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/** Provenance in berth's shape: repository, pr, licence, plus every raw key. */
export function toTaskSource(source: Record<string, unknown> | undefined): TaskSource | undefined {
  if (!source) return undefined;
  const s = source as Record<string, string | undefined>;
  const repository =
    s.repository ??
    s.repository_url ??
    (s.repository_owner && s.repository_name ? `${s.repository_owner}/${s.repository_name}` : undefined);
  const pr = s.pr ?? s.pr_url ?? s.code_change_url;
  return {
    ...source,
    ...(repository ? { repository } : {}),
    ...(pr ? { pr } : {}),
    ...(s.license ? { license: s.license } : {}),
  };
}

export interface HarborTaskExtras {
  config: HarborTaskConfig;
  taskDir: string;
}

/**
 * Loads one task folder.
 * @throws InputError for a bad task.toml (file, line, key) or a missing instruction.md / tests/test.sh
 */
export function loadHarborTask(taskDir: string): Task {
  const dir = resolve(taskDir);
  const tomlPath = join(dir, 'task.toml');
  // Links out of the task folder are refused before any file of it is read.
  const links = escapingSymlinks(dir);
  if (links.length > 0) throw InputError.all(links);
  // The task's fixed files, when present, must be files (a folder by that name would crash
  // whatever reads it later: the check, the build, the verifier).
  const notFiles = ['instruction.md', 'environment/Dockerfile', 'tests/test.sh', 'tests/test.bat']
    .concat(['solution/solve.sh', 'solution/solve.bat'])
    .map((name) => join(dir, name))
    .filter((file) => existsSync(file) && !statSync(file).isFile());
  if (notFiles.length > 0)
    throw InputError.all(notFiles.map((file) => ({ file, message: 'is a folder, a file was expected' })));
  const config = parseTaskToml(readInputText(tomlPath), tomlPath);
  const multiStep = Boolean(config.steps?.length);
  const instructionPath = join(dir, 'instruction.md');
  let instruction = '';
  if (existsSync(instructionPath)) instruction = stripCanary(readInputText(instructionPath));
  else if (!multiStep)
    throw new InputError(
      { file: instructionPath },
      'missing instruction.md (required for a single-step task)',
    );

  const envDir = join(dir, 'environment');
  const dockerfile = join(envDir, 'Dockerfile');
  const compose = ['docker-compose.yaml', 'docker-compose.yml']
    .map((f) => join(envDir, f))
    .find((f) => existsSync(f));
  const testsDir = join(dir, 'tests');
  const solutionDir = join(dir, 'solution');
  const script = config.os === 'windows' ? 'bat' : 'sh';
  if (!multiStep && !existsSync(join(testsDir, `test.${script}`))) {
    throw new InputError(
      { file: join(testsDir, `test.${script}`) },
      'missing test script (required unless verification is disabled)',
    );
  }
  const basesDir = findBasesDir(dir);
  const archive = sampleTaskArchive(dir);
  const name = basename(dir);
  const task: Task = {
    name,
    format: 'harbor',
    origin: { file: tomlPath },
    instruction,
    environment: {
      kind: 'docker',
      image: config.dockerImage,
      dockerfileDir: existsSync(dockerfile) ? envDir : undefined,
      composeFile: compose,
      contextDir: envDir,
      workdir: config.workdir,
      cpus: config.cpus,
      memoryMb: config.memoryMb,
      storageMb: config.storageMb,
      gpus: config.gpus,
      ...(config.gpuTypes ? { gpuTypes: config.gpuTypes } : {}),
      ...(config.tpu ? { tpu: config.tpu } : {}),
      ...(Object.keys(config.environmentEnv).length > 0 ? { env: config.environmentEnv } : {}),
      os: config.os,
      buildTimeoutSec: config.buildTimeoutSec,
      network: config.network,
      basesDir,
      imageName: `hb__${name.toLowerCase().replace(/[^a-z0-9_.-]/g, '-')}`,
      // A task of the multilingual demo run on its own: its sample_task.json `tar_path`.
      ...(archive ? { imageArchive: archive } : {}),
    },
    solution: existsSync(join(solutionDir, `solve.${script}`))
      ? { kind: 'script', dir: solutionDir, env: config.solutionEnv }
      : multiStep && hasStepSolution(dir, config.steps ?? [], script)
        ? // Multi-step: each step's solution/ is used in turn (src/trials/plan.ts).
          { kind: 'script', dir: join(dir, 'steps'), env: config.solutionEnv }
        : { kind: 'none' },
    verifier: {
      kind: 'harbor',
      testsDir,
      timeoutSec: config.verifierTimeoutSec,
      env: config.verifierEnv,
      user: config.verifierUser,
      network: config.verifierNetwork,
      mode: config.verifierMode,
    },
    agentTimeoutSec: config.agentTimeoutSec,
    ...(config.mcpServers.length > 0 ? { mcpServers: config.mcpServers } : {}),
    ...(config.skillsDir ? { skillsDir: config.skillsDir } : {}),
    phaseNetwork: {
      ...(config.agentNetwork ? { agent: config.agentNetwork } : {}),
      ...(config.verifierNetwork ? { verifier: config.verifierNetwork } : {}),
    },
    source: toTaskSource(config.source),
    metadata: {
      harbor: {
        task_name: config.name ?? name,
        schema_version: config.schemaVersion,
        agent_user: config.agentUser,
        agent_network: config.agentNetwork,
        multi_step: multiStep,
        warnings: config.warnings,
        task_dir: dir,
      },
      task_toml: config.raw,
    },
  };
  // A multi-step task's [[steps]] (step folders, instructions, test scripts) are checked now, before any trial.
  if (multiStep) harborPlan(task);
  return task;
}

/** True when some step of a multi-step task has `steps/<name>/solution/solve.<script>`. */
function hasStepSolution(dir: string, steps: Array<{ name: string }>, script: string): boolean {
  return steps.some((s) => existsSync(join(dir, 'steps', s.name, 'solution', `solve.${script}`)));
}

/**
 * Loads a task folder, or a dataset folder (its immediate sub-folders that
 * hold a task.toml) sorted by name, keeping the valid tasks and listing the
 * invalid ones with every problem found in each (file, line, key). A single
 * task folder that is invalid, or a dataset with no valid task, is refused.
 * @throws InputError when the path holds no task, or no valid one (listing
 *   every problem of every bad task; see `InputError.all`)
 */
export function loadHarborDataset(path: string): { tasks: Task[]; skipped: SkippedTask[] } {
  const dir = resolve(path);
  if (!isDir(dir)) throw new InputError({ file: path }, 'not a folder');
  if (looksLikeHarborTask(dir)) return { tasks: [loadHarborTask(dir)], skipped: [] };
  const tasks: Task[] = [];
  const skipped: SkippedTask[] = [];
  for (const taskDir of childDirs(dir).filter((d) => existsSync(join(d, 'task.toml')))) {
    try {
      tasks.push(loadHarborTask(taskDir));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      skipped.push({ dir: taskDir, issues: [...error.issues] });
    }
  }
  if (tasks.length === 0 && skipped.length > 0) throw InputError.all(skipped.flatMap((s) => s.issues));
  if (tasks.length === 0)
    throw new InputError(
      { file: path },
      'no Harbor task here (a task folder holds task.toml and environment/)',
    );
  return { tasks, skipped };
}

/**
 * Loads a task folder or a dataset folder, refusing any invalid task: every
 * task is loaded before any is refused, so one error lists every bad task.
 * @throws InputError when the path holds no task, or listing every problem of
 *   every bad task (each with its own file, line and key; see `InputError.all`)
 */
export function loadHarborPath(path: string): Task[] {
  const { tasks, skipped } = loadHarborDataset(path);
  if (skipped.length > 0) throw InputError.all(skipped.flatMap((s) => s.issues));
  return tasks;
}

/** The parsed config of a Harbor task (kept in `Task.metadata`). */
export function harborTaskDir(task: Task): string | undefined {
  const h = task.metadata.harbor as { task_dir?: string } | undefined;
  return h?.task_dir;
}

/** The task loader `berth run -p` uses: a Harbor task folder, or a folder with Harbor tasks among its children. */
export const harborLoader = {
  format: 'harbor',
  async recognises(path: string): Promise<boolean> {
    return isHarborPath(path);
  },
  async load(path: string): Promise<Task[]> {
    return loadHarborPath(path);
  },
  async loadValid(path: string): Promise<{ tasks: Task[]; skipped: SkippedTask[] }> {
    return loadHarborDataset(path);
  },
};
