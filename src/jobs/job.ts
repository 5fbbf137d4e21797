/**
 * Runs a job: the planned trials with bounded concurrency (p-queue), into
 * `jobs/<job>/` laid out as Harbor lays it out and valid for Harbor's models
 * (config.json, result.json, job.log, one folder per trial with its config.json,
 * result.json, trial.log and exception.txt; job-files.ts, src/trials/file-format.ts).
 * A trial that ends with an exception the retry policy names runs again (Harbor's
 * `-r/--max-retries`). Every write is atomic. Re-running a
 * job name resumes: a finished trial is kept only when its instance, attempt,
 * the sha256 of the patch the agent will submit (when known in advance), the
 * agent and berth's version all match; the rest run again. Aborting the signal
 * (Ctrl-C) stops cleanly: pending trials are not started, running ones are
 * cancelled, finished ones are kept. The sha256 of every trial result.json berth
 * writes is kept in the job's own state file (`berth-state.json`, written
 * atomically); on resume a result whose bytes no longer match it (or that it does
 * not list) is not trusted: the trial runs again, with a notice.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import PQueue from 'p-queue';
import type { Agent } from '../agents/agent.ts';
import type { EnvironmentProvider } from '../environments/environment.ts';
import type { ModelGateway, TrialLimits as ModelTrialLimits } from '../models/gateway.ts';
import { runTrial } from '../trials/engine.ts';
import { EventLog } from '../trials/event-log.ts';
import {
  type BerthEvent,
  type Emit,
  EVENTS_SCHEMA_VERSION,
  eventTime,
  jobEndEventOf,
  trialEndEventOf,
} from '../trials/events.ts';
import {
  isUuid,
  roundSec,
  trialConfigForFile,
  upgradeTrialResult,
  writeRewardFile,
} from '../trials/file-format.ts';
import { initialTrialResult, writeTrialResult } from '../trials/record.ts';
import type { TrialResult } from '../trials/result.ts';
import {
  type AgentSpec,
  type ArtifactRequest,
  type EnvironmentOptions,
  makeTrialSpec,
  type TrialLimits,
  type TrialSpec,
  type VerificationOptions,
} from '../trials/spec.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic-write.ts';
import { reclaimLeftovers } from '../util/leftovers.ts';
import type { Verifier } from '../verifiers/verifier.ts';
import { VERSION } from '../version.ts';
import {
  berthJobState,
  DEFAULT_RETRY,
  type JobSelection,
  jobConfigForFile,
  type RetryPolicy,
  retryWaitSec,
  shouldRetry,
} from './job-files.ts';
import { noteJobFolder } from './job-folder-log.ts';
import { lockJobDir } from './lock.ts';
import type { PlannedTrial } from './plan.ts';
import { checkResumeScope, resumeMismatch } from './resume.ts';
import {
  JOB_STATE_FILE,
  type JobState,
  ResultLedger,
  readJobFile,
  readJobJson,
  readJobState,
} from './state.ts';
import { jobResultBody, type ModelUsageTotals, modelUsageTotals } from './stats.ts';

/**
 * Where a planned trial runs when not here: given its spec, it runs it elsewhere (a queue of
 * workers, src/queue/submitter.ts), hands every event of the trial to `emit` as it happens,
 * writes the trial's folder at `trialDir` and returns its result; undefined when the trial was
 * never started (cancelled while queued). It throws only for what a local run would record as a
 * crashed trial.
 */
export type TrialRunner = (run: {
  spec: TrialSpec;
  trial: PlannedTrial;
  trialDir: string;
  emit: Emit;
  signal?: AbortSignal;
}) => Promise<TrialResult | undefined>;

export interface JobOptions {
  jobsDir: string;
  jobName: string;
  /** Dataset name recorded as each trial's `source`. */
  source: string;
  plan: PlannedTrial[];
  agent: Agent;
  /**
   * How another process makes the agent (its registry name and options), recorded in each
   * trial's spec; default the agent's name without options.
   */
  agentSpec?: AgentSpec;
  providers: readonly EnvironmentProvider[];
  verifiers: readonly Verifier[];
  /** The providers' options as data, recorded in each trial's spec. */
  environment?: EnvironmentOptions;
  /** Resource limits of untrusted commands, recorded in each trial's spec. */
  limits?: TrialLimits;
  /** Consent to secret-looking host variables in Harbor env templates (`--allow-env-secrets`). */
  allowEnvSecrets?: boolean;
  /** Trials run at once (default 1). */
  concurrency?: number;
  timeoutMultiplier?: number;
  /**
   * Per-phase timeout multipliers (Harbor's `--agent-`, `--verifier-`, `--agent-setup-`,
   * `--environment-build-timeout-multiplier`), each replacing `timeoutMultiplier` for its phase.
   */
  phaseMultipliers?: { agent?: number; verifier?: number; agentSetup?: number; environmentBuild?: number };
  /** Replaces every task's agent timeout, in seconds before multipliers (`--agent-timeout`). */
  agentTimeoutSec?: number;
  verifyEmptyPatch?: boolean;
  /** Grading rules (`--rules`), recorded in each trial's spec; the verifiers were made with them. */
  rules?: string;
  /** `--disable-verification` and `--ve` values, in each trial's spec. */
  verification?: Pick<VerificationOptions, 'disable' | 'env'>;
  /** Paths collected from every trial's environment after the agent (`--artifact`). */
  artifacts?: ArtifactRequest[];
  /** Trials run again after an exception (`-r/--max-retries`...); default Harbor's: none. */
  retry?: RetryPolicy;
  /** What `-p` and the filters were, recorded as Harbor's `datasets` / `tasks` in config.json. */
  selection?: JobSelection;
  /** Attempts per task (`-k`), recorded as `n_attempts`; default the plan's largest attempt. */
  attempts?: number;
  /** Harbor's `--debug` / `-q`, recorded in config.json (the reporters act on them). */
  debug?: boolean;
  quiet?: boolean;
  /** berth's own settings (the command line's options), recorded in config.json under `berth.options`. */
  config?: Record<string, unknown>;
  /**
   * What defines the job's trials (dataset, agent, predictions file, attempts, filters), by
   * label. Recorded in config.json as `berth_identity`; re-running the job name with a different
   * identity is refused (resume is for the same configuration).
   */
  identity?: Record<string, unknown>;
  /**
   * The filters that pick the trials (include, exclude, limit), by label. Re-running the job
   * with other filters is allowed only when every planned trial is already one of the job's
   * (resuming a part of it); otherwise it is refused like an identity change.
   */
  filters?: Record<string, unknown>;
  signal?: AbortSignal;
  /** Called when a trial starts and when it ends (or is kept from a previous run). */
  onTrialStart?: (trial: PlannedTrial) => void;
  onTrialEnd?: (result: TrialResult, info: { reused: boolean; trial: PlannedTrial }) => void;
  /** Told why a previous result is not kept although it would match (e.g. it was changed). */
  onNotice?: (message: string) => void;
  /** Every event of the job as it happens (also appended to `jobs/<job>/events.jsonl`). */
  onEvent?: (event: BerthEvent) => void;
  /**
   * The job's model gateway and the trials' limits, when trials call models (each planned
   * trial names its model). Once the gateway's job budget is spent no further trial starts.
   */
  models?: { gateway: ModelGateway; limits?: ModelTrialLimits };
  /** Runs each trial elsewhere (`berth run --queue`); default here, with the trial engine. */
  runner?: TrialRunner;
}

export interface JobSummary {
  job_name: string;
  job_dir: string;
  started_at: string;
  finished_at: string;
  duration_sec: number;
  /** Trials planned. */
  total: number;
  resolved: number;
  /** True when the job was stopped before every trial finished. */
  cancelled: boolean;
  /** Results in plan order (trials never started are absent). */
  trials: TrialResult[];
  /** How many results were kept from a previous run of the same job. */
  reused: number;
  /** Tokens and cost of the trials' model calls (Harbor's JobStats fields), when the job called models. */
  model_usage?: ModelUsageTotals;
  /** Trials not started because the job's model budget was spent. */
  not_started_over_budget?: number;
}

/**
 * Runs (or resumes) a job and returns its summary. Trial failures never reject.
 * @throws UsageError when the job folder is locked by another running process, or
 *   holds a job with a different `identity`.
 */
export async function runJob(options: JobOptions): Promise<JobSummary> {
  const jobDir = resolve(options.jobsDir, options.jobName);
  const release = await lockJobDir(jobDir, options.jobName);
  noteJobFolder(jobDir);
  try {
    await reclaimDeadOwners(options);
    return await runLockedJob(options, jobDir);
  } finally {
    await release();
  }
}

/**
 * Removes what berth processes that were killed left (issue 10 §4): this job's temp folders
 * and tmpfs mounts (src/util/leftovers.ts) and, for the environment kinds the job uses, what the
 * providers hold for dead owners (containers, networks, egress proxies). Never a live owner's.
 * A failure to clean up is not the job's: it is written to stderr and the job goes on.
 */
async function reclaimDeadOwners(options: JobOptions): Promise<void> {
  try {
    await reclaimLeftovers({ job: options.jobName });
    const kinds = new Set(options.plan.map((p) => p.task.environment.kind));
    for (const provider of options.providers) if (kinds.has(provider.kind)) await provider.reclaim?.();
  } catch (error) {
    process.stderr.write(`berth: could not remove what an earlier run left: ${(error as Error).message}\n`);
  }
}

/** A previous result of a planned trial, with the sha256 of its bytes. */
type Stored = { result: TrialResult; sha256: string } | undefined;

async function runLockedJob(options: JobOptions, jobDir: string): Promise<JobSummary> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  // Every state file is read (and a damaged one refused) before anything is written.
  const previous = berthJobState(await readJobJson(join(jobDir, 'config.json'), options.jobName));
  // Every trial result, with the sha256 of its bytes (the lock keeps them as they are until used).
  const storedResults: Stored[] = await Promise.all(
    options.plan.map(async (trial) => {
      const file = await readJobFile(join(jobDir, trial.trialName, 'result.json'), options.jobName);
      return file && { result: file.value as unknown as TrialResult, sha256: file.sha256 };
    }),
  );
  const scope = options.identity
    ? checkResumeScope(previous, {
        jobName: options.jobName,
        jobDir,
        identity: options.identity,
        filters: options.filters,
        trialNames: options.plan.map((p) => p.trialName),
      })
    : { filters: options.filters, trialNames: options.plan.map((p) => p.trialName) };
  await writeJobConfig(options, scope);
  const log = await EventLog.open(join(jobDir, 'events.jsonl'), {
    text: join(jobDir, 'job.log'),
    textFilter: (event) =>
      JOB_LOG_EVENTS.has(event.type) || (event.type === 'phase-end' && !!event.exception),
  });
  try {
    return await runTrials(
      options,
      jobDir,
      storedResults,
      { startedAt, started, id: await jobIdOf(jobDir) },
      (event) => {
        log.write(event);
        options.onEvent?.(event);
      },
    );
  } finally {
    log.close();
  }
}

/** Runs (or keeps) every planned trial, with bounded concurrency, and returns the job's summary. */
async function runTrials(
  options: JobOptions,
  jobDir: string,
  storedResults: Stored[],
  clock: { startedAt: string; started: number; id: string },
  emit: Emit,
): Promise<JobSummary> {
  const { startedAt, started } = clock;
  const progress = {
    id: clock.id,
    jobName: options.jobName,
    startedAt,
    finishedAt: null as string | null,
    plan: options.plan,
    results: new Map<number, TrialResult>(),
    running: new Set<number>(),
    overBudget: 0,
    retries: 0,
  };
  const retry = options.retry ?? DEFAULT_RETRY;
  // Job result writes are serialised so the last one written is the latest state.
  let writing: Promise<void> = Promise.resolve();
  const writeJobResult = () => {
    const body = jobResultBody(progress);
    writing = writing.then(() => writeJsonAtomic(join(jobDir, 'result.json'), body)).catch(() => {});
    return writing;
  };
  await writeJobResult();
  const ledger = new ResultLedger(jobDir, await readJobState(jobDir));
  emit({
    type: 'job-start',
    v: EVENTS_SCHEMA_VERSION,
    time: eventTime(),
    job: options.jobName,
    job_id: progress.id,
    n_trials: options.plan.length,
    berth_version: VERSION,
  });
  const notice = (message: string) => {
    emit({
      type: 'notice',
      v: EVENTS_SCHEMA_VERSION,
      time: eventTime(),
      job: options.jobName,
      level: 'warning',
      message,
    });
    options.onNotice?.(message);
  };

  const queue = new PQueue({ concurrency: Math.max(1, options.concurrency ?? 1) });
  const signal = options.signal;
  const onAbort = () => queue.clear();
  signal?.addEventListener('abort', onAbort, { once: true });
  let reused = 0;
  options.plan.forEach((trial, index) => {
    queue.add(async () => {
      if (signal?.aborted) return;
      const trialDir = join(jobDir, trial.trialName);
      const stored = storedResults[index];
      const kept = await keptResult(stored, trial, trialDir, options, progress.id, ledger, notice);
      let result: TrialResult;
      if (kept) {
        result = kept;
        reused++;
        emit(trialEndEventOf(kept, options.jobName, true));
      } else {
        const gateway = options.models?.gateway;
        if (gateway?.budgetExhausted) {
          if (progress.overBudget++ === 0)
            notice(`the job's model budget is spent ($${gateway.jobCostUsd}): no further trial is started`);
          return;
        }
        if (stored) await rm(trialDir, { recursive: true, force: true });
        progress.running.add(index);
        options.onTrialStart?.(trial);
        let ran = await runPlannedTrial(trial, trialDir, options, progress.id, emit);
        // Harbor's retries: the trial's folder is removed and it runs again, after a back-off.
        for (let n = 0; ran && n < retry.max_retries; n++) {
          const type = ran.exception_info?.exception_type;
          if (signal?.aborted || !shouldRetry(retry, type)) break;
          const waitSec = retryWaitSec(retry, n);
          notice(
            `${trial.trialName}: ${type}; running it again in ${waitSec} s (retry ${n + 1} of ${retry.max_retries})`,
          );
          if (!(await sleepUnlessAborted(waitSec, signal))) break;
          await rm(trialDir, { recursive: true, force: true });
          progress.retries++;
          await writeJobResult();
          ran = await runPlannedTrial(trial, trialDir, options, progress.id, emit);
        }
        progress.running.delete(index);
        // Never started (cancelled while waiting on a queue): as a trial the job did not reach.
        if (!ran) return;
        result = ran;
      }
      progress.results.set(index, result);
      if (!kept) await ledger.record(trial.trialName);
      options.onTrialEnd?.(result, { reused: kept !== undefined, trial });
      await writeJobResult();
    });
  });
  await queue.onIdle();
  signal?.removeEventListener('abort', onAbort);
  const { results } = progress;
  const cancelled =
    (signal?.aborted ?? false) ||
    results.size + progress.overBudget < options.plan.length ||
    [...results.values()].some((r) => r.berth.status === 'cancelled');
  progress.finishedAt = new Date().toISOString();
  await ledger.flushed();
  await writeJobResult();
  const trials = options.plan.map((_, i) => results.get(i)).filter((r): r is TrialResult => r !== undefined);
  const modelUsage = modelUsageTotals(trials);
  const summary: JobSummary = {
    job_name: options.jobName,
    job_dir: jobDir,
    started_at: startedAt,
    finished_at: progress.finishedAt,
    duration_sec: roundSec((performance.now() - started) / 1000),
    total: options.plan.length,
    resolved: trials.filter((r) => r.berth.resolved).length,
    cancelled,
    trials,
    reused,
    ...(modelUsage ? { model_usage: modelUsage } : {}),
    ...(progress.overBudget > 0 ? { not_started_over_budget: progress.overBudget } : {}),
  };
  emit(jobEndEventOf(summary));
  return summary;
}

/** Events `job.log` holds (the trial's own events are in its `trial.log`), and phases that failed. */
const JOB_LOG_EVENTS: ReadonlySet<string> = new Set([
  'job-start',
  'job-end',
  'trial-start',
  'trial-end',
  'notice',
]);

/** The agents of a job as data: one per `-m` model, or the job's agent. */
function agentSpecsOf(options: JobOptions): AgentSpec[] {
  const seen = new Map<string, AgentSpec>();
  for (const trial of options.plan) {
    const spec = agentSpecOf(trial, options);
    seen.set(JSON.stringify(spec), spec);
  }
  return seen.size > 0 ? [...seen.values()] : [agentSpecOf(undefined, options)];
}

/** The job's config.json (Harbor's JobConfig): what it runs, and under `berth` what resume checks. */
async function writeJobConfig(
  options: JobOptions,
  scope: { filters: Record<string, unknown> | undefined; trialNames: string[] },
): Promise<void> {
  const tasks = [...new Map(options.plan.map((p) => [p.task.name, p.task])).values()];
  await writeJsonAtomic(
    join(resolve(options.jobsDir, options.jobName), 'config.json'),
    jobConfigForFile({
      jobName: options.jobName,
      jobsDir: resolve(options.jobsDir),
      source: options.source,
      ...(options.selection ? { selection: options.selection } : {}),
      tasks,
      nTrials: options.plan.length,
      attempts: options.attempts ?? Math.max(1, ...options.plan.map((p) => p.attempt)),
      concurrency: options.concurrency ?? 1,
      timeouts: timeoutsOf(options),
      debug: options.debug === true,
      quiet: options.quiet === true,
      retry: options.retry ?? DEFAULT_RETRY,
      agents: agentSpecsOf(options),
      environment: options.environment ?? {},
      limits: options.limits ?? {},
      verification: verificationOf(options),
      ...(options.artifacts ? { artifacts: options.artifacts } : {}),
      ...(options.config ? { options: options.config } : {}),
      ...(options.identity
        ? {
            resume: {
              identity: options.identity,
              trials: scope.trialNames,
              ...(scope.filters ? { filters: scope.filters } : {}),
            },
          }
        : {}),
    }),
  );
}

/** Waits `seconds` unless `signal` aborts first; false when it did. */
function sleepUnlessAborted(seconds: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((done) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      done(true);
    }, seconds * 1000);
    const onAbort = () => {
      clearTimeout(timer);
      done(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Harbor's JobResult.id is a UUID; a resumed job keeps its own. */
async function jobIdOf(jobDir: string): Promise<string> {
  const jobId = await readFile(join(jobDir, 'result.json'), 'utf8')
    .then((text) => (JSON.parse(text) as { id?: unknown }).id)
    .catch(() => undefined);
  return isUuid(jobId) ? jobId : randomUUID();
}

/**
 * The previous result of a trial when it can be kept: it matches the run (`resumeMismatch`)
 * and its bytes are those berth recorded (or the job predates the state file). A kept result
 * written by an earlier berth is brought to the current file format (a failed rewrite leaves
 * the old file, which still resumes). Undefined when the trial must run (again), with a
 * notice when the only reason is that the file changed.
 */
async function keptResult(
  stored: Stored,
  trial: PlannedTrial,
  trialDir: string,
  options: JobOptions,
  jobId: string,
  ledger: ResultLedger,
  notice: (message: string) => void,
): Promise<TrialResult | undefined> {
  const previous = stored?.result;
  const agent = trial.agent ?? options.agent;
  if (!stored || !previous || resumeMismatch(previous, trial, agent) !== undefined) return undefined;
  const state: JobState = ledger.state;
  const recorded = state.result_sha256[trial.trialName];
  const legacy = state.legacy && recorded === undefined;
  if (recorded !== stored.sha256 && !legacy) {
    notice(
      `${trial.trialName}: result.json ${recorded ? 'changed since berth wrote it (sha256 differs)' : `is not in the job's ${JOB_STATE_FILE}`}; not kept, running the trial again`,
    );
    return undefined;
  }
  // An earlier berth's trial gains Harbor's fields (task_id, config) and its config.json is
  // rewritten as Harbor's TrialConfig; a failed rewrite leaves the old files, which still resume.
  const config = trialConfigForFile(trialSpecOf(trial, options, jobId), trial.task, trialDir);
  if (upgradeTrialResult(previous, config)) await writeTrialResult(trialDir, previous).catch(() => {});
  await ledger.record(trial.trialName);
  const verifier = options.verifiers.find((v) => v.kind === trial.task.verifier.kind);
  if (verifier?.rewardFileByEngine) await writeRewardFile(trialDir, previous).catch(() => false);
  await writeJsonAtomic(join(trialDir, 'config.json'), previous.config).catch(() => {});
  return previous;
}

/** The agent of a planned trial as data: the job's agent spec, with the trial's model (`-m`). */
function agentSpecOf(trial: PlannedTrial | undefined, options: JobOptions): AgentSpec {
  const spec = options.agentSpec ?? { name: options.agent.info.name, options: {} };
  return trial?.model ? { name: spec.name, options: { ...spec.options, model: trial.model.id } } : spec;
}

/** The job's timeouts as every trial's spec carries them. */
function timeoutsOf(options: JobOptions): TrialSpec['timeouts'] {
  const phase = options.phaseMultipliers ?? {};
  return {
    multiplier: options.timeoutMultiplier ?? 1,
    ...(phase.agent !== undefined ? { agentMultiplier: phase.agent } : {}),
    ...(phase.verifier !== undefined ? { verifierMultiplier: phase.verifier } : {}),
    ...(phase.agentSetup !== undefined ? { agentSetupMultiplier: phase.agentSetup } : {}),
    ...(phase.environmentBuild !== undefined ? { environmentBuildMultiplier: phase.environmentBuild } : {}),
    ...(options.agentTimeoutSec !== undefined ? { agentTimeoutSec: options.agentTimeoutSec } : {}),
  };
}

/** How every trial of the job is verified. */
function verificationOf(options: JobOptions): VerificationOptions {
  return {
    ...(options.verifyEmptyPatch ? { verifyEmptyPatch: true } : {}),
    ...(options.rules ? { rules: options.rules } : {}),
    ...(options.verification?.disable ? { disable: true } : {}),
    ...(options.verification?.env && Object.keys(options.verification.env).length > 0
      ? { env: options.verification.env }
      : {}),
  };
}

/** The spec of a planned trial of the job. */
export function trialSpecOf(trial: PlannedTrial, options: JobOptions, jobId: string): TrialSpec {
  return makeTrialSpec({
    job: { id: jobId, name: options.jobName, source: options.source },
    trialName: trial.trialName,
    attempt: trial.attempt,
    task: trial.task,
    agent: agentSpecOf(trial, options),
    ...(options.environment ? { environment: options.environment } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    timeouts: timeoutsOf(options),
    verification: verificationOf(options),
    ...(options.artifacts?.length ? { artifacts: options.artifacts } : {}),
    ...(options.allowEnvSecrets ? { allowEnvSecrets: true } : {}),
    ...(options.config ? { config: options.config } : {}),
  });
}

/** Runs one planned trial; a failure to write its folder is recorded, never thrown. */
async function runPlannedTrial(
  trial: PlannedTrial,
  trialDir: string,
  options: JobOptions,
  jobId: string,
  emit: Emit,
): Promise<TrialResult | undefined> {
  try {
    const spec = trialSpecOf(trial, options, jobId);
    if (options.runner)
      return await options.runner({
        spec,
        trial,
        trialDir,
        emit,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    return await runTrial(spec, emit, {
      trialDir,
      task: trial.task,
      runtime: {
        agent: trial.agent ?? options.agent,
        providers: options.providers,
        verifiers: options.verifiers,
      },
      ...(options.models && trial.model
        ? {
            models: {
              gateway: options.models.gateway,
              target: trial.model,
              ...(options.models.limits ? { limits: options.models.limits } : {}),
            },
          }
        : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    // runTrial records everything that happens inside a trial; this only catches
    // failures to write its folder, which must not stop the job either.
    const result = crashedTrialResult(trial, options, jobId, error);
    // A trial that failed elsewhere (a worker refused it) is recorded in its folder, as any trial.
    if (options.runner) {
      await writeJsonAtomic(join(trialDir, 'result.json'), result).catch(() => {});
      await writeFileAtomic(
        join(trialDir, 'exception.txt'),
        result.exception_info?.exception_traceback ?? '',
      ).catch(() => {});
    }
    emit(trialEndEventOf(result, options.jobName));
    return result;
  }
}

function crashedTrialResult(
  trial: PlannedTrial,
  options: JobOptions,
  jobId: string,
  error: unknown,
): TrialResult {
  const e = error instanceof Error ? error : new Error(String(error));
  const result = initialTrialResult({
    spec: trialSpecOf(trial, options, jobId),
    task: trial.task,
    trialDir: join(resolve(options.jobsDir, options.jobName), trial.trialName),
    agent: (trial.agent ?? options.agent).info,
  });
  result.finished_at = result.started_at;
  result.exception_info = {
    exception_type: e.name,
    exception_message: e.message,
    exception_traceback: e.stack ?? e.message,
    occurred_at: result.started_at,
  };
  result.berth.note = `${e.name}: ${e.message}`;
  return result;
}
