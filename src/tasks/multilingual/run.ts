/**
 * `berth multilingual run`: a multilingual-demo dataset through the same job as `berth run`
 * (src/jobs/job.ts: the engine, its environments and isolation, events, resume), with the
 * demo's own grading (verify.ts), summarised by task type and language.
 *
 * `local` runs each task's `environment/repo/` in berth's local environment (the sandbox of
 * every untrusted command); `docker` builds the task's Dockerfile. The job folder is a `berth
 * run` job folder (`berth report JOB` reads it by task type and language).
 */
import { resolve } from 'node:path';
import type { AgentOptions } from '../../agents/registry.ts';
import { createAgent } from '../../agents/registry.ts';
import { PrerequisiteError } from '../../errors.ts';
import { runJob } from '../../jobs/job.ts';
import { planTrials } from '../../jobs/plan.ts';
import { type CategoryRow, groupByCategory } from '../../reporters/by-category.ts';
import type { TrialResult } from '../../trials/result.ts';
import { providersFor } from '../../trials/runtime.ts';
import { createVerifiers } from '../../verifiers/registry.ts';
import { VERSION } from '../../version.ts';
import { placeTasks } from '../registry.ts';
import './register.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadMultilingualDataset } from './loader.ts';

export type MultilingualAgent = 'oracle' | 'nop' | 'predictions';

export interface MultilingualRunOptions {
  dataset: string;
  agent: MultilingualAgent;
  /** SWE-bench predictions (instance_id, model_patch), JSON or JSONL, for `predictions`; a task without one gets an empty patch. */
  predictionsFile?: string;
  jobsDir: string;
  jobName: string;
  /** Only these instance ids, when given. */
  include?: string[];
  /**
   * `local` (default): berth's local environment (sandboxed), repository from `environment/repo/`.
   * `docker`: the task's `environment/Dockerfile` (FROM berth-multilingual:bookworm, built by
   * examples/multilingual/image/build-image.sh), tests run without network.
   */
  environment?: 'local' | 'docker';
  /** Docker: folder of the tasks' image archives (`tar_path`); default `<dataset>/sample_images`. */
  imagesDir?: string;
  onTrial?: (row: MultilingualRow) => void;
  signal?: AbortSignal;
}

export interface MultilingualRow extends CategoryRow {
  instance_id: string;
  task_type: string;
  language: string;
  reward: number;
  resolved: boolean;
  counts?: Record<string, { passed: number; total: number }>;
  discarded_test_files: string[];
  /** The trial failed closed: berth saw tampering (`berth.tampering`), e.g. test-runner settings among the code changes. */
  tampering?: true;
  exception?: { type: string; message: string };
  duration_sec: number;
}

export interface MultilingualJobResult {
  job_name: string;
  job_dir: string;
  agent: MultilingualAgent;
  berth_version: string;
  environment: 'local' | 'docker';
  /** True when the tests ran without network (the local sandbox or Docker). */
  isolated: boolean;
  resolved: number;
  total: number;
  by_task_type: ReturnType<typeof groupByCategory>;
  by_language: ReturnType<typeof groupByCategory>;
  trials: MultilingualRow[];
}

/** A trial's result as the multilingual summary shows it. */
export function multilingualRow(result: TrialResult): MultilingualRow {
  const categories = result.berth.categories ?? {};
  const details = (result.berth.verifier_details ?? {}) as {
    counts?: MultilingualRow['counts'];
    discarded_test_files?: Array<{ path: string }>;
  };
  const reward = result.verifier_result?.rewards?.reward ?? 0;
  const e = result.exception_info;
  return {
    instance_id: result.task_name,
    task_type: String(categories.task_type ?? ''),
    language: String(categories.language ?? ''),
    categories: { task_type: categories.task_type, language: categories.language },
    reward,
    resolved: result.berth.resolved,
    ...(details.counts ? { counts: details.counts } : {}),
    discarded_test_files: (details.discarded_test_files ?? []).map((file) => file.path),
    ...(result.berth.tampering?.vetoed ? { tampering: true as const } : {}),
    ...(e ? { exception: { type: e.exception_type, message: e.exception_message } } : {}),
    duration_sec: result.berth.duration_sec,
  };
}

export async function runMultilingualJob(options: MultilingualRunOptions): Promise<MultilingualJobResult> {
  const where = options.environment ?? 'local';
  let tasks = placeTasks(await loadMultilingualDataset(options.dataset), where);
  if (options.include?.length) tasks = tasks.filter((task) => options.include?.includes(task.name));
  // A task with a tar_path gets its image from its archive (image-archives.ts), not the toolchain image.
  if (where === 'docker')
    await checkDockerImages(
      tasks
        .filter((t) => !(t.environment.kind === 'docker' && t.environment.imageArchive))
        .map((t) => String(t.metadata.task_dir)),
    );
  const agentOptions: AgentOptions =
    options.agent === 'predictions'
      ? {
          ...(options.predictionsFile ? { predictionsFile: resolve(options.predictionsFile) } : {}),
          predictionsMissing: 'empty',
        }
      : {};
  const agent = await createAgent(options.agent, agentOptions);
  const environment = options.imagesDir ? { imagesDir: resolve(options.imagesDir) } : {};
  const summary = await runJob({
    jobsDir: resolve(options.jobsDir),
    jobName: options.jobName,
    source: 'multilingual',
    plan: planTrials(tasks),
    agent,
    agentSpec: { name: options.agent, options: agentOptions },
    providers: providersFor({ environment, limits: {}, timeouts: { multiplier: 1 } }),
    verifiers: createVerifiers(),
    environment,
    // The demo grades every task, an empty change too (its tests run and say what fails).
    verifyEmptyPatch: true,
    config: { dataset: resolve(options.dataset), agent_name: options.agent, env: where },
    ...(options.signal ? { signal: options.signal } : {}),
    onTrialEnd: (result) => options.onTrial?.(multilingualRow(result)),
  });
  const rows = summary.trials.map(multilingualRow);
  return {
    job_name: summary.job_name,
    job_dir: summary.job_dir,
    agent: options.agent,
    berth_version: VERSION,
    environment: where,
    isolated: summary.trials.length > 0 && summary.trials.every((t) => t.berth.isolated),
    resolved: rows.filter((row) => row.resolved).length,
    total: rows.length,
    by_task_type: groupByCategory(rows, ['task_type']),
    by_language: groupByCategory(rows, ['language']),
    trials: rows,
  };
}

/** The image the bundled examples' Dockerfiles start from, built by examples/multilingual/image/build-image.sh. */
export const MULTILINGUAL_IMAGE = 'berth-multilingual:bookworm';

/** Refuses to start when a Dockerfile needs the toolchain image and it is not built (it cannot be pulled). */
async function checkDockerImages(taskDirs: string[]): Promise<void> {
  const needs = new Set<string>();
  for (const dir of taskDirs) {
    const dockerfile = await readFile(join(dir, 'environment', 'Dockerfile'), 'utf8').catch(() => '');
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
