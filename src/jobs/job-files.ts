/**
 * The job folder's own files, as Harbor's models read them (`harbor.models.job.config.JobConfig`,
 * `harbor.models.job.result.JobResult`; JSON Schemas in test/fixtures/harbor-schemas/):
 *
 * - `config.json`: Harbor's JobConfig (`agents[]`, `datasets`/`tasks`, `n_attempts`, `jobs_dir`,
 *   the per-phase timeout multipliers, `retry`, `environment`, `verifier`, `artifacts`) with
 *   berth's own settings, and what resume needs (identity, filters, trial list), under `berth`;
 * - `job.log`: the job's events as text (src/trials/event-log.ts), `events.jsonl` beside it.
 *
 * A job folder an earlier berth wrote (berth's fields at the top level of config.json) is read
 * through `berthJobState`.
 */
import { resolve } from 'node:path';
import type { Task } from '../tasks/task.ts';
import {
  agentConfigForFile,
  environmentConfigForFile,
  type HarborAgentConfig,
  type HarborArtifact,
  type HarborEnvironmentConfig,
  type HarborVerifierConfig,
  taskPathOf,
  verifierConfigForFile,
} from '../trials/file-format.ts';
import type {
  AgentSpec,
  ArtifactRequest,
  EnvironmentOptions,
  TrialLimits,
  TrialTimeouts,
  VerificationOptions,
} from '../trials/spec.ts';
import { VERSION } from '../version.ts';

/**
 * Harbor's retry policy (`-r/--max-retries`, `--retry-include`, `--retry-exclude`; JobConfig
 * `retry`, src/harbor/trial/queue.py): a trial whose exception type is not excluded, and is
 * included when an include list is given, runs again (its folder removed first) up to
 * `max_retries` times, after `min(min_wait_sec * wait_multiplier^n, max_wait_sec)` seconds.
 */
export interface RetryPolicy {
  max_retries: number;
  /** Exception types to retry; null retries every one not excluded. */
  include_exceptions: string[] | null;
  /** Exception types never retried (they win over `include_exceptions`). */
  exclude_exceptions: string[];
  wait_multiplier: number;
  min_wait_sec: number;
  max_wait_sec: number;
}

/**
 * Harbor's default: no retry; timeouts and reward-file errors are never retried. berth adds
 * `AgentWorkError` (the agent's work cannot be taken, src/trials/errors.ts): the agent can cause
 * it at will, so retrying it would give the agent another attempt whenever it liked.
 */
export const DEFAULT_RETRY: RetryPolicy = {
  max_retries: 0,
  include_exceptions: null,
  exclude_exceptions: [
    'AgentTimeoutError',
    'VerifierTimeoutError',
    'RewardFileNotFoundError',
    'RewardFileEmptyError',
    'VerifierOutputParseError',
    'AgentWorkError',
  ],
  wait_multiplier: 1,
  min_wait_sec: 1,
  max_wait_sec: 60,
};

/** Whether a trial that ended with `exceptionType` is retried under `policy` (Harbor's rule). */
export function shouldRetry(policy: RetryPolicy, exceptionType: string | undefined): boolean {
  if (exceptionType === undefined || exceptionType === 'CancelledError') return false;
  if (policy.exclude_exceptions.includes(exceptionType)) return false;
  return policy.include_exceptions === null || policy.include_exceptions.includes(exceptionType);
}

/** Seconds to wait before retry number `n` (0-based). */
export function retryWaitSec(policy: RetryPolicy, n: number): number {
  return Math.min(policy.min_wait_sec * policy.wait_multiplier ** n, policy.max_wait_sec);
}

/** What picked the job's tasks: `-p` and the filters (Harbor's `datasets[]` / `tasks[]`). */
export interface JobSelection {
  /** The path given with `-p`. */
  path: string;
  /** `-i/--include-task-name` globs. */
  include?: string[];
  /** `-x/--exclude-task-name` globs. */
  exclude?: string[];
  /** `-l/--n-tasks`. */
  limit?: number;
}

/** Everything the job's `config.json` records. */
export interface JobConfigParts {
  jobName: string;
  jobsDir: string;
  /** The source recorded as each trial's `source` (the dataset's name). */
  source: string;
  selection?: JobSelection;
  /** The planned tasks (one per task, whatever the attempts). */
  tasks: readonly Task[];
  nTrials: number;
  attempts: number;
  concurrency: number;
  timeouts: Omit<TrialTimeouts, 'agentTimeoutSec'> & { agentTimeoutSec?: number };
  debug?: boolean;
  quiet?: boolean;
  retry: RetryPolicy;
  /** The agent(s): one per `-m` model (Harbor's one AgentConfig per model). */
  agents: readonly AgentSpec[];
  environment: EnvironmentOptions;
  limits: TrialLimits;
  verification: VerificationOptions;
  artifacts?: readonly ArtifactRequest[];
  /** berth's own settings (the command line's options), recorded under `berth.options`. */
  options?: Record<string, unknown>;
  /** What resume checks (dataset, agent, attempts...), the filters, the planned trial names. */
  resume?: { identity: Record<string, unknown>; filters?: Record<string, unknown>; trials: string[] };
}

/** Harbor's JobConfig, with berth's part under `berth`. */
export interface HarborJobConfig {
  job_name: string;
  jobs_dir: string;
  n_attempts: number;
  timeout_multiplier: number;
  agent_timeout_multiplier: number | null;
  verifier_timeout_multiplier: number | null;
  agent_setup_timeout_multiplier: number | null;
  environment_build_timeout_multiplier: number | null;
  debug: boolean;
  n_concurrent_trials: number;
  quiet: boolean;
  retry: RetryPolicy;
  environment: HarborEnvironmentConfig;
  verifier: HarborVerifierConfig;
  metrics: unknown[];
  agents: HarborAgentConfig[];
  datasets: Array<{
    path: string;
    task_names: string[] | null;
    exclude_task_names: string[] | null;
    n_tasks: number | null;
  }>;
  tasks: Array<{ path: string; source: string | null }>;
  artifacts: HarborArtifact[];
  extra_instruction_paths: string[];
  plugins: unknown[];
  berth: {
    version: string;
    source: string;
    n_trials: number;
    options: Record<string, unknown>;
    identity?: Record<string, unknown>;
    filters?: Record<string, unknown>;
    trials?: string[];
  };
}

/**
 * `-p` as Harbor's JobConfig holds it: a single Harbor task folder is one of `tasks`, anything
 * else (a folder of tasks, a rows file) one of `datasets`, with the filters.
 */
function selectionForFile(parts: JobConfigParts): Pick<HarborJobConfig, 'datasets' | 'tasks'> {
  const selection = parts.selection;
  if (!selection) {
    // A job given its tasks without a `-p` (a test, `berth dataset validate`): each task's
    // folder, or the row file its rows come from.
    const source = parts.source || null;
    const rowFiles = new Set(parts.tasks.filter((t) => t.origin.line !== undefined).map(taskPathOf));
    const folders = new Set(parts.tasks.filter((t) => t.origin.line === undefined).map(taskPathOf));
    return {
      datasets: [...rowFiles].map((path) => ({
        path,
        task_names: null,
        exclude_task_names: null,
        n_tasks: null,
      })),
      tasks: [...folders].map((path) => ({ path, source })),
    };
  }
  const only = parts.tasks.length === 1 ? parts.tasks[0] : undefined;
  const single =
    only !== undefined && only.format === 'harbor' && taskPathOf(only) === resolve(selection.path);
  if (single) return { datasets: [], tasks: [{ path: selection.path, source: parts.source || null }] };
  return {
    datasets: [
      {
        path: selection.path,
        task_names: selection.include?.length ? [...selection.include] : null,
        exclude_task_names: selection.exclude?.length ? [...selection.exclude] : null,
        n_tasks: selection.limit ?? null,
      },
    ],
    tasks: [],
  };
}

/** The job's `config.json`. */
export function jobConfigForFile(parts: JobConfigParts): HarborJobConfig {
  const t = parts.timeouts;
  const docker = parts.tasks.length > 0 && parts.tasks.every((task) => task.environment.kind === 'docker');
  return {
    job_name: parts.jobName,
    jobs_dir: parts.jobsDir,
    n_attempts: parts.attempts,
    timeout_multiplier: t.multiplier,
    agent_timeout_multiplier: t.agentMultiplier ?? null,
    verifier_timeout_multiplier: t.verifierMultiplier ?? null,
    agent_setup_timeout_multiplier: t.agentSetupMultiplier ?? null,
    environment_build_timeout_multiplier: t.environmentBuildMultiplier ?? null,
    debug: parts.debug === true,
    n_concurrent_trials: parts.concurrency,
    quiet: parts.quiet === true,
    retry: parts.retry,
    environment: environmentConfigForFile(parts.environment, parts.limits, docker),
    verifier: verifierConfigForFile(parts.verification),
    metrics: [],
    agents: parts.agents.map((agent) => agentConfigForFile(agent, t)),
    ...selectionForFile(parts),
    artifacts: [...(parts.artifacts ?? [])],
    extra_instruction_paths: [],
    plugins: [],
    berth: {
      version: VERSION,
      source: parts.source,
      n_trials: parts.nTrials,
      options: parts.options ?? {},
      ...(parts.resume
        ? {
            identity: parts.resume.identity,
            trials: parts.resume.trials,
            ...(parts.resume.filters ? { filters: parts.resume.filters } : {}),
          }
        : {}),
    },
  };
}

/** What a job's config.json says for resume, whichever berth wrote it (under `berth`, or at the top level before). */
export interface BerthJobState {
  identity?: Record<string, unknown>;
  filters?: Record<string, unknown>;
  trials?: unknown;
  /** The dataset's name (`source`). */
  source?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** berth's part of a job's config.json: `berth.*`, or an earlier berth's top-level `berth_*` fields. */
export function berthJobState(config: Record<string, unknown> | undefined): BerthJobState {
  if (!config) return {};
  const berth = isRecord(config.berth) ? config.berth : undefined;
  const pick = (key: string, legacy: string) => (berth ? berth[key] : config[legacy]);
  const identity = pick('identity', 'berth_identity');
  const filters = pick('filters', 'berth_filters');
  const source = berth ? berth.source : config.source;
  return {
    ...(isRecord(identity) ? { identity } : {}),
    ...(isRecord(filters) ? { filters } : {}),
    ...(pick('trials', 'berth_trials') !== undefined ? { trials: pick('trials', 'berth_trials') } : {}),
    ...(typeof source === 'string' ? { source } : {}),
  };
}
