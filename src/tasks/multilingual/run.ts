/**
 * Runs a multilingual-demo dataset on this machine (TempDirEnvironment) with
 * the oracle, nop or a predictions file, grades every task with the
 * multilingual verifier and writes a job folder:
 *
 * ```
 * <jobs-dir>/<job>/config.json, result.json    Harbor's JobConfig / JobResult; the rows and the
 *                                              summary by task type and language under `berth`
 * <jobs-dir>/<job>/<instance>__<attempt>/config.json, result.json   Harbor's TrialConfig / TrialResult
 * <jobs-dir>/<job>/<instance>__<attempt>/verifier/{agent,code_changes,test_changes,test_patch}.diff,
 *                                                      test-stdout.txt, report.json
 * ```
 *
 * Stand-in until the trial engine (src/trials/, src/jobs/) runs these tasks.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Environment } from '../../environments/environment.ts';
import { InputError, PrerequisiteError } from '../../errors.ts';
import { harborJobStats } from '../../jobs/harbor-stats.ts';
import { DEFAULT_RETRY, jobConfigForFile } from '../../jobs/job-files.ts';
import { noteJobFolder } from '../../jobs/job-folder-log.ts';
import { type CategoryRow, groupByCategory } from '../../reporters/by-category.ts';
import { now } from '../../trials/errors.ts';
import { initialTrialResult, writeTrialResult } from '../../trials/record.ts';
import type { TrialResult } from '../../trials/result.ts';
import { makeTrialSpec, type TrialSpec } from '../../trials/spec.ts';
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
  noteJobFolder(jobDir);
  const job = { id: randomUUID(), name: options.jobName, source: basename(resolve(options.dataset)) };
  const startedAt = now();
  const agentSpec = {
    name: options.agent,
    options: options.predictionsFile ? { predictionsFile: resolve(options.predictionsFile) } : {},
  };
  const specOf = (task: MultilingualTask): TrialSpec =>
    makeTrialSpec({ job, trialName: `${task.name}__1`, attempt: 1, task, agent: agentSpec });
  await writeJsonAtomic(
    join(jobDir, 'config.json'),
    jobConfigForFile({
      jobName: options.jobName,
      jobsDir: resolve(options.jobsDir),
      source: job.source,
      selection: {
        path: resolve(options.dataset),
        ...(options.include?.length ? { include: options.include } : {}),
      },
      tasks,
      nTrials: tasks.length,
      attempts: 1,
      concurrency: 1,
      timeouts: { multiplier: 1 },
      retry: DEFAULT_RETRY,
      agents: [agentSpec],
      environment: {},
      limits: {},
      verification: {},
      options: { command: 'multilingual run', environment: options.environment ?? 'local' },
    }),
  );
  const rows: MultilingualRow[] = [];
  const results: TrialResult[] = [];
  for (const task of tasks) {
    const { row, result } = await runTrial(
      task,
      options.agent,
      predictions.get(task.name),
      jobDir,
      options.environment ?? 'local',
      specOf(task),
    );
    rows.push(row);
    results.push(result);
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
  const stats = harborJobStats(results);
  await writeJsonAtomic(join(jobDir, 'result.json'), {
    id: job.id,
    started_at: startedAt,
    updated_at: now(),
    finished_at: now(),
    n_total_trials: tasks.length,
    stats: {
      n_completed_trials: results.length,
      n_errored_trials: stats.n_errors,
      n_running_trials: 0,
      n_pending_trials: 0,
      n_cancelled_trials: 0,
      n_retries: 0,
      evals: stats.evals,
    },
    berth: result,
  });
  await writeFile(
    join(jobDir, 'job.log'),
    `${rows.map((row) => `${startedAt} INFO [${row.instance_id}__1] ${row.resolved ? 'resolved' : 'unresolved'} reward ${row.reward}${row.exception ? `; ${row.exception.type}` : ''}`).join('\n')}\n`,
  );
  return result;
}

async function runTrial(
  task: MultilingualTask,
  agent: MultilingualAgent,
  prediction: string | undefined,
  jobDir: string,
  kind: 'local' | 'docker',
  spec: TrialSpec,
): Promise<{ row: MultilingualRow; result: TrialResult }> {
  const trialName = spec.trial.name;
  const jobId = spec.job.name;
  const trialDir = join(jobDir, trialName);
  await mkdir(join(trialDir, 'agent'), { recursive: true });
  const record = initialTrialResult({ spec, task, trialDir, agent: { name: agent, version: VERSION } });
  await writeJsonAtomic(join(trialDir, 'config.json'), record.config);
  const categories = { task_type: task.entry.task_type, language: task.entry.language };
  let verifier: VerifierResult | undefined;
  let exception: { type: string; message: string } | undefined;
  const started = performance.now();
  let env: Environment | undefined;
  try {
    let baseCommit: string;
    if (kind === 'docker') {
      const { DockerEnvironmentProvider } = await import('../../environments/docker/provider.ts');
      env = await new DockerEnvironmentProvider().start({ task, jobId, trialDir });
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
  record.finished_at = now();
  record.agent_setup = { started_at: record.started_at, finished_at: record.started_at };
  record.verifier_result = verifier ? { rewards: verifier.rewards } : null;
  if (exception)
    record.exception_info = {
      exception_type: exception.type,
      exception_message: exception.message,
      exception_traceback: exception.message,
      occurred_at: record.finished_at,
    };
  Object.assign(record.berth, {
    status: exception && !verifier ? 'error' : row.resolved ? 'resolved' : 'unresolved',
    resolved: row.resolved,
    note: exception ? `${exception.type}: ${exception.message.split('\n')[0]}` : '',
    verifier_details: verifier?.details ?? null,
    duration_sec: row.duration_sec,
    isolated: kind === 'docker',
    isolation_method: kind === 'docker' ? 'docker' : null,
    categories: categories,
  });
  await writeTrialResult(trialDir, record);
  return { row, result: record };
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
