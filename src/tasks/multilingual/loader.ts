/**
 * Loads a multilingual-demo dataset (seed layout):
 *
 * ```
 * <root>/sample_task.json
 * <root>/sample_tasks/<instance_id>/{task.toml, instruction.md, environment/, tests/config.json,
 *                                    tests/test_patch.diff, solution/solve.sh}
 * ```
 *
 * Every task becomes a `Task` with a `multilingual` verifier. The repository
 * snapshot the bundled examples carry lives in `environment/repo/` (the seed's
 * tasks carry it in a Docker image instead).
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { z } from 'zod';
import { InputError } from '../../errors.ts';
import { parseTomlInput } from '../../util/toml.ts';
import type { Task } from '../task.ts';
import { type SampleTask, sampleTaskSchema, type TaskConfig, taskConfigSchema } from './format.ts';

/** Default verifier timeout (seconds) when task.toml sets none (Harbor's default). */
const DEFAULT_VERIFIER_TIMEOUT_SEC = 600;

export interface MultilingualTask extends Task {
  format: 'multilingual';
  /** The task folder. */
  dir: string;
  entry: SampleTask;
  config: TaskConfig;
}

/** True when `path` is a multilingual dataset root (it holds `sample_task.json`). */
export function isMultilingualDataset(path: string): boolean {
  return existsSync(join(path, 'sample_task.json'));
}

/**
 * The image archive of a task folder run on its own (`berth run -p <root>/sample_tasks/<id>`, as
 * the demo's README runs Harbor): its `tar_path` in `<root>/sample_task.json`, or undefined when
 * the folder is not in such a dataset or has none. Lenient: a `sample_task.json` it cannot
 * read gives undefined (the Harbor task still runs; the dataset's own loader reports it).
 */
export function sampleTaskArchive(taskDir: string): { tarPath: string; datasetDir: string } | undefined {
  const dir = resolve(taskDir);
  if (basename(dirname(dir)) !== 'sample_tasks') return undefined;
  const datasetDir = dirname(dirname(dir));
  const file = join(datasetDir, 'sample_task.json');
  if (!existsSync(file)) return undefined;
  try {
    const list = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!Array.isArray(list)) return undefined;
    const entry = list.find(
      (e) => e && typeof e === 'object' && (e as { instance_id?: unknown }).instance_id === basename(dir),
    ) as { tar_path?: unknown } | undefined;
    return typeof entry?.tar_path === 'string' && entry.tar_path
      ? { tarPath: entry.tar_path, datasetDir }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Reads every task of the dataset at `root`; bad input throws `InputError` naming file and field. */
export async function loadMultilingualDataset(root: string): Promise<MultilingualTask[]> {
  const file = join(resolve(root), 'sample_task.json');
  const raw = await readJson(file);
  if (!Array.isArray(raw)) throw new InputError({ file }, 'expected a JSON list of tasks');
  const seen = new Set<string>();
  const tasks: MultilingualTask[] = [];
  for (const [index, item] of raw.entries()) {
    const entry = check(sampleTaskSchema, item, file, `[${index}]`);
    if (seen.has(entry.instance_id)) {
      throw new InputError(
        { file, field: `[${index}].instance_id` },
        `duplicate instance_id ${entry.instance_id}`,
      );
    }
    seen.add(entry.instance_id);
    tasks.push(await loadTask(dirname(file), entry));
  }
  return tasks;
}

async function loadTask(root: string, entry: SampleTask): Promise<MultilingualTask> {
  const dir = join(root, 'sample_tasks', entry.instance_id);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    throw new InputError(
      { file: join(root, 'sample_task.json'), field: 'instance_id' },
      `no task folder ${dir}`,
    );
  }
  const configFile = join(dir, 'tests', 'config.json');
  const config = check(taskConfigSchema, await readJson(configFile), configFile, '');
  if (config.instance_id !== undefined && config.instance_id !== entry.instance_id) {
    throw new InputError(
      { file: configFile, field: 'instance_id' },
      `${config.instance_id} differs from ${entry.instance_id}`,
    );
  }
  for (const key of ['f2p_tests', 'p2p_tests'] as const) {
    if (JSON.stringify([...config[key]].sort()) !== JSON.stringify([...entry.ut_results[key]].sort())) {
      throw new InputError({ file: configFile, field: key }, 'differs from ut_results in sample_task.json');
    }
  }
  const testPatchFile = join(dir, 'tests', 'test_patch.diff');
  const testPatch = await readFile(testPatchFile, 'utf8').catch(() => {
    throw new InputError({ file: testPatchFile }, 'missing: the task needs its test patch');
  });
  const toml = await readToml(join(dir, 'task.toml'));
  const verifierTimeout = numberAt(toml, 'verifier', 'timeout_sec') ?? DEFAULT_VERIFIER_TIMEOUT_SEC;
  const instructionFile = join(dir, 'instruction.md');
  const instruction = existsSync(instructionFile)
    ? await readFile(instructionFile, 'utf8')
    : entry.problem_statement;
  const { instance_id, task_type, language, repo_url, base_commit, problem_statement, ut_results, ...rest } =
    entry;
  return {
    name: instance_id,
    format: 'multilingual',
    origin: { file: dir },
    instruction,
    environment: {
      kind: 'docker',
      dockerfileDir: join(dir, 'environment'),
      workdir: '/testbed',
      network: { mode: 'public' },
      ...(entry.tar_path ? { imageArchive: { tarPath: entry.tar_path, datasetDir: root } } : {}),
    },
    // The gold patch when the task ships one (any environment can apply it), else solve.sh.
    solution: existsSync(join(dir, 'solution', 'fix.patch'))
      ? { kind: 'patch', patch: await readFile(join(dir, 'solution', 'fix.patch'), 'utf8') }
      : { kind: 'script', dir: join(dir, 'solution') },
    verifier: {
      kind: 'multilingual',
      baseCommit: base_commit,
      testPatch,
      testCommand: config.test_cmd,
      parser: config.log_parser,
      failToPass: config.f2p_tests,
      passToPass: config.p2p_tests,
      passToFail: config.p2f_tests,
      failToFail: config.f2f_tests,
      timeoutSec: config.test_timeout_sec ?? verifierTimeout,
    },
    agentTimeoutSec: numberAt(toml, 'agent', 'timeout_sec'),
    source: { repository: repo_url },
    metadata: { task_type, language, repo_url, problem_statement, ut_results, ...rest, task_dir: dir },
    dir,
    entry,
    config,
  };
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new InputError({ file }, error.code === 'ENOENT' ? 'file not found' : error.message);
  });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError({ file }, `not JSON: ${(error as Error).message}`);
  }
}

async function readToml(file: string): Promise<Record<string, unknown>> {
  if (!existsSync(file)) return {};
  return parseTomlInput(await readFile(file, 'utf8'), file);
}

function numberAt(toml: Record<string, unknown>, section: string, key: string): number | undefined {
  const value = (toml[section] as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'number' ? value : undefined;
}

function check<T extends z.ZodType>(schema: T, value: unknown, file: string, prefix: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path =
    issue?.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('') ?? '';
  const field = `${prefix}${path}`.replace(/^\./, '') || undefined;
  throw new InputError({ file, field }, issue?.message ?? 'invalid');
}
