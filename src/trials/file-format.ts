/**
 * How berth writes a trial's records to disk, so Harbor's own models read them
 * (`harbor.models.trial.config.TrialConfig`, `harbor.models.trial.result.TrialResult`;
 * JSON Schemas in test/fixtures/harbor-schemas/): Harbor's field names and values, berth's
 * own facts under a `berth` key, snake_case, durations in seconds rounded to milliseconds,
 * and Harbor's `verifier/reward.txt` for verifiers that do not write one themselves
 * (SWE-bench). Also upgrades a trial written by an earlier berth (no `task_id` / `config`,
 * camelCase `agent_result`, unrounded durations, no reward file) when a job is resumed.
 */
import { access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AgentResult } from '../agents/agent.ts';
import { redactSecrets } from '../sandbox/secrets.ts';
import type { Task } from '../tasks/task.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { VERSION } from '../version.ts';
import type { TrialResult } from './result.ts';
import type { AgentSpec, EnvironmentOptions, TrialLimits, TrialSpec, TrialTimeouts } from './spec.ts';

const MiB = 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a UUID (Harbor's `JobResult.id`, `TrialConfig.job_id` are). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Harbor's `AgentConfig` (an entry of the job's `agents`, a trial's `agent`). */
export interface HarborAgentConfig {
  name: string;
  import_path: null;
  model_name: string | null;
  skills: string[];
  override_timeout_sec: number | null;
  override_setup_timeout_sec: number | null;
  max_timeout_sec: null;
  extra_allowed_hosts: string[];
  kwargs: Record<string, unknown>;
  /** Values of secret-looking names (`*KEY*`, `*TOKEN*`...) are written as `***`. */
  env: Record<string, string>;
  mcp_servers: unknown[];
}

/** Harbor's `EnvironmentConfig`. */
export interface HarborEnvironmentConfig {
  /** `docker`, or null with `import_path` naming berth's local sandbox for trials without Docker. */
  type: 'docker' | null;
  import_path: string | null;
  force_build: boolean;
  delete: boolean;
  cpu_enforcement_policy: 'auto';
  memory_enforcement_policy: 'auto';
  override_cpus: number | null;
  override_memory_mb: number | null;
  override_storage_mb: number | null;
  override_gpus: null;
  override_tpu: null;
  mounts: null;
  extra_docker_compose: string[];
  env: Record<string, string>;
  kwargs: Record<string, unknown>;
  extra_allowed_hosts: string[];
}

/** Harbor's `VerifierConfig`. */
export interface HarborVerifierConfig {
  override_timeout_sec: null;
  max_timeout_sec: null;
  env: Record<string, string>;
  disable: boolean;
}

/** Harbor's `ArtifactConfig`, or a plain path. */
export type HarborArtifact = string | { source: string; destination?: string | null; exclude?: string[] };

/** What `import_path` says for trials in berth's local sandbox (Harbor has no such environment type). */
export const LOCAL_ENVIRONMENT_IMPORT_PATH = 'berth:local-sandbox';

/** Environment variables as a config file records them: values that look like credentials as `***`. */
export function envForFile(env: Record<string, string> | undefined): Record<string, string> {
  return redactSecrets(env ?? {});
}

/** Harbor's `AgentConfig` of an agent spec (its registry name, `-m`, `--ak`, `--ae`, timeouts). */
export function agentConfigForFile(agent: AgentSpec, timeouts?: Partial<TrialTimeouts>): HarborAgentConfig {
  const o = agent.options;
  return {
    name: agent.name,
    import_path: null,
    model_name: typeof o.model === 'string' ? o.model : null,
    skills: [],
    override_timeout_sec: timeouts?.agentTimeoutSec ?? null,
    override_setup_timeout_sec: typeof o.agentSetupTimeoutSec === 'number' ? o.agentSetupTimeoutSec : null,
    max_timeout_sec: null,
    extra_allowed_hosts: [],
    kwargs: { ...(o.agentKwargs ?? {}) },
    env: envForFile(o.agentEnv),
    mcp_servers: [],
  };
}

/** A whole number Harbor's int field takes, else null (berth keeps the exact value under `berth`). */
const wholeOrNull = (value: number | undefined) =>
  value !== undefined && Number.isInteger(value) ? value : null;

/**
 * Harbor's `EnvironmentConfig` of a run: Docker when every trial runs in Docker, else berth's
 * local sandbox; `--force-build`, `--delete`, and the `--override-*` limits in Harbor's units.
 */
export function environmentConfigForFile(
  environment: EnvironmentOptions,
  limits: TrialLimits,
  docker: boolean,
): HarborEnvironmentConfig {
  const mb = (bytes: number | undefined) =>
    bytes === undefined ? undefined : Math.round((bytes / MiB) * 1000) / 1000;
  return {
    type: docker ? 'docker' : null,
    import_path: docker ? null : LOCAL_ENVIRONMENT_IMPORT_PATH,
    force_build: environment.rebuild === true,
    delete: environment.keep !== true,
    cpu_enforcement_policy: 'auto',
    memory_enforcement_policy: 'auto',
    override_cpus: wholeOrNull(limits.cpus),
    override_memory_mb: wholeOrNull(mb(limits.memoryBytes)),
    override_storage_mb: wholeOrNull(mb(limits.writableBytes)),
    override_gpus: null,
    override_tpu: null,
    mounts: null,
    extra_docker_compose: [],
    env: {},
    kwargs: {},
    extra_allowed_hosts: [],
  };
}

/** Harbor's `VerifierConfig`: `--ve` values (secrets as `***`) and `--disable-verification`. */
export function verifierConfigForFile(verification: TrialSpec['verification']): HarborVerifierConfig {
  return {
    override_timeout_sec: null,
    max_timeout_sec: null,
    env: envForFile(verification.env),
    disable: verification.disable === true,
  };
}

/** Harbor's `TaskConfig`/`LocalTaskId` path of a task: its folder, or the row file it is a line of. */
export function taskPathOf(task: Pick<Task, 'format' | 'origin'>): string {
  const file = task.origin.file;
  return task.origin.line === undefined && /(^|\/)task\.toml$/.test(file) ? dirname(file) : file;
}

/** Harbor's `TrialConfig` of a trial, as its `config.json` and its result's `config` hold it. */
export interface HarborTrialConfig {
  task: { path: string; source: string | null };
  trial_name: string;
  trials_dir: string;
  timeout_multiplier: number;
  agent_timeout_multiplier: number | null;
  verifier_timeout_multiplier: number | null;
  agent_setup_timeout_multiplier: number | null;
  environment_build_timeout_multiplier: number | null;
  agent: HarborAgentConfig;
  environment: HarborEnvironmentConfig;
  verifier: HarborVerifierConfig;
  artifacts: HarborArtifact[];
  extra_instruction_paths: string[];
  /** The job's UUID; null for a trial run outside a job with an id that is not one. */
  job_id: string | null;
  berth: {
    version: string;
    task_name: string;
    attempt: number;
    /** The job's name (its folder). */
    job_name: string;
    /** The job's id when it is not a UUID (a trial run outside a job). */
    job_id?: string;
    /** Where the task was read from: a file and, for row files, the 1-based line. */
    task_origin: Task['origin'];
    /** The task's format (`swebench`, `harbor`, `multilingual`...). */
    task_format: string;
    /** The exact `--override-*` requests where Harbor's whole numbers cannot hold them. */
    limits?: TrialLimits;
    rules?: string;
  };
}

/** The Harbor `TrialConfig` of a trial from its spec (what it runs) and its folder. */
export function trialConfigForFile(spec: TrialSpec, task: Task, trialDir: string): HarborTrialConfig {
  const t = spec.timeouts;
  const exact =
    (spec.limits.cpus !== undefined && !Number.isInteger(spec.limits.cpus)) ||
    (spec.limits.memoryBytes !== undefined && spec.limits.memoryBytes % MiB !== 0) ||
    (spec.limits.writableBytes !== undefined && spec.limits.writableBytes % MiB !== 0);
  return {
    task: { path: taskPathOf(task), source: spec.job.source || null },
    trial_name: spec.trial.name,
    trials_dir: dirname(trialDir),
    timeout_multiplier: t.multiplier,
    agent_timeout_multiplier: t.agentMultiplier ?? null,
    verifier_timeout_multiplier: t.verifierMultiplier ?? null,
    agent_setup_timeout_multiplier: t.agentSetupMultiplier ?? null,
    environment_build_timeout_multiplier: t.environmentBuildMultiplier ?? null,
    agent: agentConfigForFile(spec.agent, t),
    environment: environmentConfigForFile(spec.environment, spec.limits, task.environment.kind === 'docker'),
    verifier: verifierConfigForFile(spec.verification),
    artifacts: spec.artifacts ?? [],
    extra_instruction_paths: [],
    job_id: isUuid(spec.job.id) ? spec.job.id : null,
    berth: {
      version: VERSION,
      task_name: task.name,
      attempt: spec.trial.attempt,
      job_name: spec.job.name,
      ...(isUuid(spec.job.id) ? {} : { job_id: spec.job.id }),
      task_origin: task.origin,
      task_format: task.format,
      ...(exact ? { limits: spec.limits } : {}),
      ...(spec.verification.rules ? { rules: spec.verification.rules } : {}),
    },
  };
}

/** Seconds rounded to milliseconds (3 decimals), as every duration berth writes. */
export function roundSec(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** `modelName` → `model_name`. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * The agent's result as the trial's `agent_result` records it (the patch is in
 * `agent/patch.diff`): top-level keys in snake_case (`modelName` → `model_name`);
 * `metadata` is kept as the agent gave it.
 */
export function agentResultForFile(result: Omit<AgentResult, 'patch'>): Record<string, unknown> {
  return snakeKeys(result);
}

/** A copy of a record with its top-level keys in snake_case. */
export function snakeKeys(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [snakeCase(key), value]));
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Writes Harbor's `verifier/reward.txt` (the single `reward`, e.g. `1` resolved, `0` not)
 * for a trial that has rewards and no reward file yet, so tools reading Harbor rewards
 * work on SWE-bench trials. A reward file written by the task's own tests is never replaced.
 * @returns whether a file was written.
 */
export async function writeRewardFile(trialDir: string, result: TrialResult): Promise<boolean> {
  const rewards = result.verifier_result?.rewards;
  if (!rewards || typeof rewards.reward !== 'number') return false;
  const dir = join(trialDir, 'verifier');
  if ((await exists(join(dir, 'reward.txt'))) || (await exists(join(dir, 'reward.json')))) return false;
  if (Object.keys(rewards).length === 1)
    await writeFileAtomic(join(dir, 'reward.txt'), `${rewards.reward}\n`);
  else await writeFileAtomic(join(dir, 'reward.json'), `${JSON.stringify(rewards)}\n`);
  return true;
}

function roundDurations(value: unknown): boolean {
  let changed = false;
  if (Array.isArray(value)) {
    for (const item of value) changed = roundDurations(item) || changed;
  } else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(record)) {
      if (/duration_sec$/.test(key) && typeof v === 'number' && roundSec(v) !== v) {
        record[key] = roundSec(v);
        changed = true;
      } else if (key !== 'tests') changed = roundDurations(v) || changed;
    }
  }
  return changed;
}

/**
 * Brings a trial result written by an earlier berth to the current file format, in place:
 * Harbor's `task_id` and `config` (the trial's `config`, as the resumed job records it),
 * `agent_setup` timed as an instant before the agent when the earlier berth left it null (every
 * agent's set-up runs; it did nothing then), `agent_info.model_info` null for the oracle's and
 * nop's SWE-bench labels (`gold`, `nop`), `agent_result` keys in snake_case, durations rounded
 * to milliseconds, `matchedBy` / `matchedId` of the verdicts as `matched_by` / `matched_id`.
 * @returns whether anything changed (the caller rewrites the file then).
 */
export function upgradeTrialResult(result: TrialResult, config?: HarborTrialConfig): boolean {
  let changed = false;
  const record = result as unknown as Record<string, unknown>;
  if (config && (!record.config || typeof record.config !== 'object' || !record.task_id)) {
    result.config = config;
    result.task_id = { path: config.task.path };
    changed = true;
  }
  if (result.agent_setup === null && result.agent_execution?.started_at) {
    const at = result.agent_execution.started_at;
    result.agent_setup = { started_at: at, finished_at: at };
    changed = true;
  }
  const info = result.agent_info;
  if (
    info?.model_info &&
    ((info.name === 'oracle' && info.model_info.name === 'gold') ||
      (info.name === 'nop' && info.model_info.name === 'nop'))
  ) {
    info.model_info = null;
    changed = true;
  }
  if (result.agent_result && typeof result.agent_result === 'object') {
    const upgraded = snakeKeys(result.agent_result);
    if (Object.keys(upgraded).join() !== Object.keys(result.agent_result).join()) {
      result.agent_result = upgraded;
      changed = true;
    }
  }
  if (result.berth) changed = roundDurations(result.berth) || changed;
  const tests = result.berth?.verifier_details?.tests;
  if (Array.isArray(tests)) {
    for (const test of tests as Record<string, unknown>[]) {
      for (const key of ['matchedBy', 'matchedId']) {
        if (test && key in test) {
          test[snakeCase(key)] = test[key];
          delete test[key];
          changed = true;
        }
      }
    }
  }
  return changed;
}

/** Verdicts as berth writes them: `matchedBy` / `matchedId` as `matched_by` / `matched_id`. */
export function verdictsForFile<T extends object>(verdicts: readonly T[]): Record<string, unknown>[] {
  return verdicts.map(snakeKeys);
}
