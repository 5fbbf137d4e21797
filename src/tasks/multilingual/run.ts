/**
 * Runs a multilingual-demo dataset on this machine (TempDirEnvironment) with
 * the oracle, nop or a predictions file, grades every task with the
 * multilingual verifier and writes a job folder:
 *
 * ```
 * <jobs-dir>/<job>/result.json                 rows + summary by task type and language
 * <jobs-dir>/<job>/<instance>__<attempt>/result.json   Harbor's field names
 * <jobs-dir>/<job>/<instance>__<attempt>/verifier/{agent,code_changes,test_changes,test_patch}.diff,
 *                                                      test-stdout.txt, report.json
 * ```
 *
 * Stand-in until the trial engine (src/trials/, src/jobs/) runs these tasks.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../../environments/environment.ts';
import { InputError, PrerequisiteError } from '../../errors.ts';
import { type CategoryRow, groupByCategory } from '../../reporters/by-category.ts';
import { writeJsonAtomic } from '../../util/atomic-write.ts';
import { shellQuote } from '../../util/shell.ts';
import type { VerifierResult } from '../../verifiers/verifier.ts';
import { VERSION } from '../../version.ts';
import { loadMultilingualDataset, type MultilingualTask } from './loader.ts';
import { TempDirEnvironment } from './local-workspace.ts';
import { runMultilingualVerification } from './verify.ts';

export type MultilingualAgent = 'oracle' | 'nop' | 'predictions';

export interface MultilingualRunOptions {
  dataset: string;
  agent: MultilingualAgent;
  /** SWE-bench predictions (JSON list or JSONL of instance_id, model_patch), for `predictions`. */
  predictionsFile?: string;
  jobsDir: string;
  jobName: string;
  /** Only these instance ids, when given. */
  include?: string[];
  /**
   * `local` (default): a temporary folder on this machine, repository from `environment/repo/`.
   * `docker`: the task's `environment/Dockerfile` (FROM berth-multilingual:bookworm, built by
   * examples/multilingual/image/build-image.sh), tests run without network.
   */
  environment?: 'local' | 'docker';
  /** Docker: folder of the tasks' image archives (`tar_path`); default `<dataset>/sample_images`. */
  imagesDir?: string;
  onTrial?: (row: MultilingualRow) => void;
}

export interface MultilingualRow extends CategoryRow {
  instance_id: string;
  task_type: string;
  language: string;
  reward: number;
  resolved: boolean;
  counts?: Record<string, { passed: number; total: number }>;
  discarded_test_files: string[];
  exception?: { type: string; message: string };
  duration_sec: number;
}

export interface MultilingualJobResult {
  job_name: string;
  agent: MultilingualAgent;
  berth_version: string;
  environment: 'local-temp' | 'docker';
  /** True when the tests ran without network (Docker). */
  isolated: boolean;
  resolved: number;
  total: number;
  by_task_type: ReturnType<typeof groupByCategory>;
  by_language: ReturnType<typeof groupByCategory>;
  trials: MultilingualRow[];
}

export async function runMultilingualJob(options: MultilingualRunOptions): Promise<MultilingualJobResult> {
  let tasks = await loadMultilingualDataset(options.dataset);
  if (options.include?.length) tasks = tasks.filter((task) => options.include?.includes(task.name));
  const predictions =
    options.agent === 'predictions'
      ? await readPredictions(options.predictionsFile)
      : new Map<string, string>();
  if (options.environment === 'docker') await checkDockerImages(tasks);
  const jobDir = join(options.jobsDir, options.jobName);
  await mkdir(jobDir, { recursive: true });
  const rows: MultilingualRow[] = [];
  for (const task of tasks) {
    const row = await runTrial(
      task,
      options.agent,
      predictions.get(task.name),
      jobDir,
      options.environment ?? 'local',
      options.jobName,
      options.imagesDir,
    );
    rows.push(row);
    options.onTrial?.(row);
  }
  const result: MultilingualJobResult = {
    job_name: options.jobName,
    agent: options.agent,
    berth_version: VERSION,
    environment: options.environment === 'docker' ? 'docker' : 'local-temp',
    isolated: options.environment === 'docker',
    resolved: rows.filter((row) => row.resolved).length,
    total: rows.length,
    by_task_type: groupByCategory(rows, ['task_type']),
    by_language: groupByCategory(rows, ['language']),
    trials: rows,
  };
  await writeJsonAtomic(join(jobDir, 'result.json'), result);
  return result;
}

async function runTrial(
  task: MultilingualTask,
  agent: MultilingualAgent,
  prediction: string | undefined,
  jobDir: string,
  kind: 'local' | 'docker',
  jobId: string,
  imagesDir: string | undefined,
): Promise<MultilingualRow> {
  const trialName = `${task.name}__1`;
  const trialDir = join(jobDir, trialName);
  await mkdir(join(trialDir, 'agent'), { recursive: true });
  const startedAt = new Date();
  const categories = { task_type: task.entry.task_type, language: task.entry.language };
  let verifier: VerifierResult | undefined;
  let exception: { type: string; message: string } | undefined;
  const started = performance.now();
  let env: Environment | undefined;
  try {
    let baseCommit: string;
    if (kind === 'docker') {
      const { DockerEnvironmentProvider } = await import('../../environments/docker/provider.ts');
      env = await new DockerEnvironmentProvider(imagesDir ? { imagesDir } : {}).start({
        task,
        jobId,
        trialDir,
      });
      const head = await env.exec('git rev-parse HEAD', { timeoutSec: 60 });
      baseCommit = head.output.trim();
    } else {
      const made = await TempDirEnvironment.fromRepo(join(task.dir, 'environment', 'repo'));
      env = made.env;
      baseCommit = made.baseCommit;
    }
    if (baseCommit !== task.entry.base_commit) {
      throw new InputError(
        { file: join(task.dir, 'environment'), field: 'base_commit' },
        `the repository is at ${baseCommit}, sample_task.json says ${task.entry.base_commit}`,
      );
    }
    if (agent === 'oracle') {
      let solveScript = join(task.dir, 'solution', 'solve.sh');
      if (kind === 'docker') {
        await env.upload(join(task.dir, 'solution'), '/solution');
        solveScript = '/solution/solve.sh';
      }
      const solve = await env.exec(`bash ${shellQuote(solveScript)}`, {
        env: { BERTH_WORKDIR: env.workdir },
        timeoutSec: 600,
        outputFile: join(trialDir, 'agent', 'oracle.txt'),
      });
      if (kind === 'docker') await env.exec('rm -rf /solution', { timeoutSec: 60, user: 'root' });
      if (solve.exitCode !== 0)
        exception = { type: 'NonZeroAgentExitCodeError', message: solve.output.slice(-2000) };
    } else if (agent === 'predictions' && prediction) {
      const patchFile = join(trialDir, 'agent', 'patch.diff');
      await writeFile(patchFile, prediction);
      await env.upload(patchFile, `${env.workdir}/.git/berth_agent_patch.diff`);
      const apply = await env.exec(
        'git apply --whitespace=nowarn .git/berth_agent_patch.diff && rm .git/berth_agent_patch.diff',
        {
          timeoutSec: 120,
        },
      );
      if (apply.exitCode !== 0) exception = { type: 'PatchApplyError', message: apply.output.slice(-2000) };
    }
    const spec = task.verifier;
    if (spec.kind !== 'multilingual') throw new Error(`${task.name} is not a multilingual task`);
    verifier = await runMultilingualVerification(env, spec, join(trialDir, 'verifier'), spec.timeoutSec);
    exception ??= verifier.exception;
  } catch (error) {
    exception = { type: (error as Error).name || 'Error', message: (error as Error).message };
  } finally {
    await env?.stop();
  }
  const reward = verifier?.rewards.reward ?? 0;
  const details = verifier?.details ?? {};
  const row: MultilingualRow = {
    instance_id: task.name,
    task_type: task.entry.task_type,
    language: task.entry.language,
    categories,
    reward,
    resolved: reward >= 1,
    counts: details.counts as MultilingualRow['counts'],
    discarded_test_files: ((details.discarded_test_files as Array<{ path: string }> | undefined) ?? []).map(
      (file) => file.path,
    ),
    duration_sec: Math.round(performance.now() - started) / 1000,
  };
  if (exception) row.exception = exception;
  await writeJsonAtomic(join(trialDir, 'result.json'), {
    task_name: task.name,
    trial_name: trialName,
    source: task.metadata.repo_url,
    agent_info: { name: agent, version: VERSION },
    verifier_result: verifier ? { rewards: verifier.rewards } : null,
    exception_info: exception
      ? { exception_type: exception.type, exception_message: exception.message }
      : null,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    metadata: {
      task_type: task.entry.task_type,
      language: task.entry.language,
      isolated: kind === 'docker',
      environment: kind,
    },
  });
  return row;
}

async function readPredictions(file: string | undefined): Promise<Map<string, string>> {
  if (!file)
    throw new InputError(
      { file: '(command line)', field: '--predictions' },
      'the predictions agent needs --predictions FILE',
    );
  const text = await readFile(file, 'utf8').catch(() => {
    throw new InputError({ file }, 'file not found');
  });
  const trimmed = text.trim();
  const rows: Array<{ value: unknown; line?: number }> = trimmed.startsWith('[')
    ? (JSON.parse(trimmed) as unknown[]).map((value) => ({ value }))
    : trimmed.split('\n').flatMap((line, index) => {
        if (line.trim() === '') return [];
        try {
          return [{ value: JSON.parse(line) as unknown, line: index + 1 }];
        } catch {
          throw new InputError({ file, line: index + 1 }, 'not JSON');
        }
      });
  const map = new Map<string, string>();
  for (const { value, line } of rows) {
    const row = value as { instance_id?: unknown; model_patch?: unknown };
    if (typeof row.instance_id !== 'string')
      throw new InputError({ file, line, field: 'instance_id' }, 'missing');
    if (typeof row.model_patch !== 'string')
      throw new InputError({ file, line, field: 'model_patch' }, 'missing');
    if (map.has(row.instance_id))
      throw new InputError({ file, line, field: 'instance_id' }, `duplicate ${row.instance_id}`);
    map.set(row.instance_id, row.model_patch);
  }
  return map;
}

/** The image the bundled examples' Dockerfiles start from, built by examples/multilingual/image/build-image.sh. */
export const MULTILINGUAL_IMAGE = 'berth-multilingual:bookworm';

/** Refuses to start when a Dockerfile needs the toolchain image and it is not built (it cannot be pulled). */
async function checkDockerImages(tasks: MultilingualTask[]): Promise<void> {
  const needs = new Set<string>();
  for (const task of tasks) {
    if (task.entry.tar_path) continue; // its image comes from its archive (image-archives.ts)
    const dockerfile = await readFile(join(task.dir, 'environment', 'Dockerfile'), 'utf8').catch(() => '');
    const from = /^\s*FROM\s+(\S+)/im.exec(dockerfile)?.[1];
    if (from === MULTILINGUAL_IMAGE) needs.add(from);
  }
  if (needs.size === 0) return;
  const { connectDocker } = await import('../../environments/docker/client.ts');
  const { docker } = await connectDocker();
  const found = await docker
    .getImage(MULTILINGUAL_IMAGE)
    .inspect()
    .then(() => true)
    .catch(() => false);
  if (!found) {
    throw new PrerequisiteError(
      `the image ${MULTILINGUAL_IMAGE} is missing; build it with examples/multilingual/image/build-image.sh (Debian packages and this machine's node, no pull)`,
    );
  }
}
