/**
 * One trial: start the environment, install, run the agent, apply its patch,
 * verify, record. Environment- and verifier-agnostic: the provider is chosen by
 * `task.environment.kind` and the verifier by `task.verifier.kind`. A trial never
 * throws for what happens inside it: crashes, timeouts and cancellations are
 * recorded in its result (Harbor's exception_info), and the result is written
 * atomically to `<trialDir>/result.json`.
 */

import { createHash, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Agent, AgentInfo, AgentResult, AgentSetupContext } from '../agents/agent.ts';
import { applyPhaseNetwork } from '../environments/docker/egress/network-switch.ts';
import type { Environment, EnvironmentProvider } from '../environments/environment.ts';
import { type TrialModels, TrialModelUse } from '../models/trial-models.ts';
import { taskCategories } from '../results/categories.ts';
import { taskChecksum } from '../tasks/checksum.ts';
import { needsExtendedTrial } from '../tasks/harbor/steps.ts';
import type { Task } from '../tasks/task.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic-write.ts';
import { withTimeout } from '../util/with-timeout.ts';
import { recordTampering } from '../verifiers/tampering/record.ts';
import type { Verifier, VerifierResult } from '../verifiers/verifier.ts';
import { VERSION } from '../version.ts';
import { applyPatch, isEmptyPatch } from './apply-patch.ts';
import { agentInfoForFile, agentResultForFile, roundSec, writeRewardFile } from './file-format.ts';
import { phaseLimitError, withLimitErrors } from './limit-errors.ts';
import { runExtendedHarborTrial } from './multi-step.ts';
import type { ExceptionInfo, TimingInfo, TrialResult } from './result.ts';
import { collectLogFolder } from './staging.ts';

/** Default limit of the install step, in seconds. */
export const DEFAULT_INSTALL_TIMEOUT_SEC = 1800;

export interface TrialOptions {
  task: Task;
  agent: Agent;
  /** 1-based attempt. */
  attempt: number;
  trialName: string;
  /** Host folder of this trial (created). */
  trialDir: string;
  jobId: string;
  /** Dataset name recorded as `source`. */
  source: string;
  providers: readonly EnvironmentProvider[];
  verifiers: readonly Verifier[];
  /** Multiplies every phase timeout (Harbor's --timeout-multiplier). */
  timeoutMultiplier?: number;
  /** Per-phase multipliers; each replaces `timeoutMultiplier` for its phase (Harbor's --agent-/--verifier-timeout-multiplier). */
  phaseMultipliers?: { agent?: number; verifier?: number };
  /** Verify empty patches too (dataset validation); by default they end as `empty_patch` without running tests. */
  verifyEmptyPatch?: boolean;
  /** The job's model gateway and this trial's model (`-m`), when the job calls models. */
  models?: TrialModels;
  signal?: AbortSignal;
}

/** sha256 hex of a patch (the resume key). */
export function patchSha256(patch: string): string {
  return createHash('sha256').update(patch, 'utf8').digest('hex');
}

/** Extra seconds the trial waits past the agent timeout for an agent that enforces it itself. */
export const AGENT_TIMEOUT_GRACE_SEC = 30;

/**
 * Harbor's AgentTimeoutError. An agent that stops its own work at the timeout may attach what
 * it produced by then (`partialResult`, e.g. the diff at that point): the trial records the
 * timeout and still grades that result, as Harbor still runs the verifier.
 */
export class AgentTimeoutError extends Error {
  override name = 'AgentTimeoutError';
  constructor(
    message: string,
    readonly partialResult?: AgentResult,
  ) {
    super(message);
  }
}
/** The install step failed or timed out. */
export class EnvironmentSetupError extends Error {
  override name = 'EnvironmentSetupError';
}
/** Cancellation (Ctrl-C), named as asyncio names it in Harbor. */
export class CancelledError extends Error {
  override name = 'CancelledError';
}

const now = () => new Date().toISOString();

function exceptionInfo(error: unknown): ExceptionInfo {
  const e = error instanceof Error ? error : new Error(String(error));
  return {
    exception_type: e.name || 'Error',
    exception_message: e.message,
    exception_traceback: e.stack ?? e.message,
    occurred_at: now(),
  };
}

/**
 * A trial's result record before any phase has run: status `error`, no verdict,
 * `started_at` now. Pure (no I/O); `beginTrialResult` and the job's record of a
 * trial that crashed outside the engine both start from it.
 */
export function initialTrialResult(fields: {
  task: Task;
  trialName: string;
  trialUri: string;
  source: TrialOptions['source'];
  attempt: number;
  agent: AgentInfo;
}): TrialResult {
  return {
    id: randomUUID(),
    task_name: fields.task.name,
    trial_name: fields.trialName,
    trial_uri: fields.trialUri,
    source: fields.source,
    task_checksum: taskChecksum(fields.task),
    agent_info: {
      name: fields.agent.name,
      version: fields.agent.version,
      model_info: fields.agent.modelName ? { name: fields.agent.modelName } : null,
    },
    agent_result: null,
    verifier_result: null,
    exception_info: null,
    started_at: now(),
    finished_at: '',
    environment_setup: null,
    agent_setup: null,
    agent_execution: null,
    verifier: null,
    berth: {
      version: VERSION,
      instance_id: fields.task.name,
      attempt: fields.attempt,
      status: 'error',
      resolved: false,
      patch_sha256: null,
      files: {},
      patch_apply: null,
      install: null,
      isolated: false,
      isolation_method: null,
      FAIL_TO_PASS: null,
      PASS_TO_PASS: null,
      note: '',
      verifier_details: null,
      duration_sec: 0,
      task_source: fields.task.source ?? null,
      categories: taskCategories(fields.task),
    },
  };
}

/**
 * Writes the trial's `config.json` and returns its result record before any
 * phase has run (status `error` until a verdict replaces it). Shared by the
 * single-step trial and the extended Harbor trial (src/trials/multi-step.ts).
 */
/**
 * Harbor's installed-agent set-up phase: once per trial, before the agent (and before the
 * first step of a multi-step task), recorded in `agent_setup` (closed even when it fails).
 * Does nothing for agents without a set-up.
 * @throws whatever the set-up throws (AgentSetupError, AgentSetupTimeoutError, ...).
 */
export async function runAgentSetup(
  agent: Agent,
  context: AgentSetupContext,
  result: TrialResult,
): Promise<void> {
  if (!agent.setup) return;
  const phase: TimingInfo = { started_at: now(), finished_at: '' };
  result.agent_setup = phase;
  try {
    await agent.setup(context);
  } finally {
    phase.finished_at = now();
  }
}

export async function beginTrialResult(options: TrialOptions): Promise<TrialResult> {
  const { task, agent, trialDir } = options;
  const multiplier = options.timeoutMultiplier ?? 1;
  await mkdir(trialDir, { recursive: true });
  await writeJsonAtomic(join(trialDir, 'config.json'), {
    task_name: task.name,
    trial_name: options.trialName,
    attempt: options.attempt,
    job_id: options.jobId,
    source: options.source,
    task_origin: task.origin,
    agent: agentInfoForFile(agent.info),
    timeout_multiplier: multiplier,
    berth_version: VERSION,
  });
  // What the agent is told, for the report's trial page (written before any untrusted code runs).
  await writeFileAtomic(join(trialDir, 'instruction.md'), task.instruction);

  return initialTrialResult({
    task,
    trialName: options.trialName,
    trialUri: pathToFileURL(trialDir).href,
    source: options.source,
    attempt: options.attempt,
    agent: agent.info,
  });
}

/** Runs one trial and writes its result. Never throws for what happens inside the trial. */
export async function runTrial(options: TrialOptions): Promise<TrialResult> {
  // Harbor tasks with steps, a separate verifier, users, healthchecks, artifacts, env templates or Kotlin grading.
  if (needsExtendedTrial(options.task)) return runExtendedHarborTrial(options);
  const { task, agent, trialDir, signal } = options;
  const multiplier = options.timeoutMultiplier ?? 1;
  const started = performance.now();
  const result = await beginTrialResult(options);
  const models = TrialModelUse.open(options.models, { ...options, agent: agent.info });
  if (task.verifier.kind === 'swebench') {
    result.berth.FAIL_TO_PASS = { passed: 0, total: task.verifier.failToPass.length };
    result.berth.PASS_TO_PASS = { passed: 0, total: task.verifier.passToPass.length };
  }
  const record = (error: unknown) => {
    if (!result.exception_info) result.exception_info = exceptionInfo(error);
  };

  let environment: Environment | undefined;
  let phase: TimingInfo | undefined;
  /** Whether the agent's log folder was copied out of its environment (once, after the agent). */
  let agentLogsCollected = false;
  try {
    const checkCancelled = () => {
      if (signal?.aborted) throw new CancelledError('cancelled');
    };
    const provider = options.providers.find((p) => p.kind === task.environment.kind);
    if (!provider) throw new Error(`no environment provider for kind ${task.environment.kind}`);
    const verifier = options.verifiers.find((v) => v.kind === task.verifier.kind);
    if (!verifier) throw new Error(`no verifier for kind ${task.verifier.kind}`);

    // Environment start and install (again for a fresh grading environment, see below).
    const startEnvironment = async (logName: string): Promise<Environment> => {
      environment = await provider.start({
        task,
        jobId: options.jobId,
        trialDir,
        // The agent's files (installed agents), once per base image; not in a grading environment.
        ...(agent.tool && logName === 'install.log' ? { tool: agent.tool } : {}),
        ...(models && logName === 'install.log' ? { modelGatewayDir: models.session.gatewayDir } : {}),
        ...(signal ? { signal } : {}),
      });
      const install = 'install' in task.environment ? task.environment.install : undefined;
      if (typeof install === 'string' && install.trim() !== '') {
        const logFile = join(trialDir, 'setup', logName);
        const run = await environment.exec(install, {
          network: { mode: 'public' },
          setup: true,
          timeoutSec: DEFAULT_INSTALL_TIMEOUT_SEC * multiplier,
          outputFile: logFile,
          ...(signal ? { signal } : {}),
        });
        if (logName === 'install.log') {
          result.berth.files.install_log = 'setup/install.log';
          result.berth.install = {
            exit_code: run.exitCode,
            timed_out: run.timedOut,
            duration_sec: roundSec(run.durationSec),
          };
        }
        checkCancelled();
        const limit = await phaseLimitError('environment-setup', environment);
        if (limit) throw limit;
        if (run.exitCode !== 0) {
          throw new EnvironmentSetupError(
            `install command ${run.timedOut ? 'timed out' : `exited ${run.exitCode}`}: ${run.output.trim().split('\n').slice(-3).join(' | ')}`,
          );
        }
      }
      return environment;
    };
    checkCancelled();
    phase = { started_at: now(), finished_at: '' };
    result.environment_setup = phase;
    environment = await startEnvironment('install.log');
    result.berth.isolated = environment.isolated;
    result.berth.isolation_method = environment.isolated
      ? (environment.isolationMethodName ?? environment.kind)
      : null;
    if (environment.limits) result.berth.limits = environment.limits.record;
    // The base commit the environment made (local); else, for verifiers that reset files to it
    // (SWE-bench), whatever HEAD is before the agent runs. Harbor's test.sh does its own.
    const baseOf = async (env: Environment): Promise<string | undefined> => {
      const made = env.baseCommit;
      if (made !== undefined || task.verifier.kind !== 'swebench') return made;
      const head = await env.exec('git rev-parse --verify -q HEAD', { timeoutSec: 60 });
      return head.exitCode === 0 ? head.output.trim() : undefined;
    };
    let baseCommit = await baseOf(environment);
    phase.finished_at = now();

    // Agent setup (Harbor's installed agents: their install step, its own limit).
    if (agent.setup) checkCancelled();
    const setupIn = environment;
    await withLimitErrors('agent-setup', setupIn, () =>
      runAgentSetup(
        agent,
        {
          task,
          environment: setupIn,
          attempt: options.attempt,
          logDir: join(trialDir, 'agent'),
          timeoutMultiplier: options.phaseMultipliers?.agent ?? multiplier,
          ...(models ? { models: models.session } : {}),
          ...(signal ? { signal } : {}),
        },
        result,
      ),
    );

    // Agent.
    checkCancelled();
    phase = { started_at: now(), finished_at: '' };
    result.agent_execution = phase;
    // Per-phase network (Harbor's [agent] network_mode): switched on the running container.
    await applyPhaseNetwork(environment, task, 'agent');
    const agentTimeout =
      task.agentTimeoutSec !== undefined
        ? task.agentTimeoutSec * (options.phaseMultipliers?.agent ?? multiplier)
        : undefined;
    let agentResult: AgentResult | undefined;
    try {
      agentResult = await withTimeout(
        agent.run({
          task,
          environment,
          attempt: options.attempt,
          logDir: join(trialDir, 'agent'),
          ...(agentTimeout !== undefined ? { timeoutSec: agentTimeout } : {}),
          ...(models ? { models: models.session } : {}),
          ...(signal ? { signal } : {}),
        }),
        // An agent that enforces the limit itself gets a grace period to hand back its partial result.
        agentTimeout !== undefined ? agentTimeout + AGENT_TIMEOUT_GRACE_SEC : undefined,
        () => new AgentTimeoutError(`the agent did not finish within ${agentTimeout} s`),
      );
    } catch (error) {
      // A resource limit hit by the agent is its error (AgentOutOfMemoryError, ...), whatever it threw.
      const limit = await phaseLimitError('agent', environment);
      if (limit) throw limit;
      // Harbor records an agent timeout and still runs the verifier (for agents acting in the environment).
      if (!(error instanceof Error && error.name === 'AgentTimeoutError')) throw error;
      record(error);
      agentResult = (error as AgentTimeoutError).partialResult;
    }
    const agentLimit = await phaseLimitError('agent', environment);
    if (agentLimit) throw agentLimit;
    phase.finished_at = now();
    // The agent's log folder, copied out as data before anything else happens to its environment.
    agentLogsCollected = true;
    await collectLogFolder(environment, 'agent', trialDir, result);
    checkCancelled();
    if (agentResult) {
      const { patch: _patch, gradeInFreshEnvironment: _fresh, ...rest } = agentResult;
      result.agent_result = agentResultForFile(rest);
      if (agentResult.modelName && !result.agent_info.model_info)
        result.agent_info.model_info = { name: agentResult.modelName };
    }
    // The agent's model session ends with it: its token does not outlive the agent phase.
    await models?.finish(result);

    // The agent's patch.
    const patch = agentResult?.patch;
    if (agentResult === undefined && task.verifier.kind === 'swebench') {
      throw new Error('the agent returned no result');
    }
    if (patch !== undefined) {
      result.berth.patch_sha256 = patchSha256(patch);
      await writeFileAtomic(join(trialDir, 'agent', 'patch.diff'), patch);
      result.berth.files.patch = 'agent/patch.diff';
      if (isEmptyPatch(patch) && !options.verifyEmptyPatch) {
        result.berth.status = 'empty_patch';
        result.berth.note = 'empty patch';
        result.verifier_result = { rewards: { reward: 0 } };
        return result;
      }
      if (!isEmptyPatch(patch) && agentResult?.gradeInFreshEnvironment) {
        // The agent acted in this environment: only its diff crosses over to a new one (SWE-bench's
        // fresh evaluation container), so whatever else it left here cannot reach the verifier.
        const used = environment;
        environment = undefined;
        await used.stop();
        checkCancelled();
        environment = await startEnvironment('install-grading.log');
        baseCommit = await baseOf(environment);
      }
      if (!isEmptyPatch(patch)) {
        const applied = await applyPatch(environment, patch, {
          ...(baseCommit ? { base: baseCommit } : {}),
          ...(signal ? { signal } : {}),
        });
        await writeFileAtomic(join(trialDir, 'agent', 'apply.log'), applied.log);
        result.berth.files.apply_log = 'agent/apply.log';
        result.berth.patch_apply = { applied: applied.applied, method: applied.method ?? null };
        checkCancelled();
        if (!applied.applied) {
          result.berth.status = 'patch_failed';
          result.berth.note = 'patch does not apply';
          result.verifier_result = { rewards: { reward: 0 } };
          return result;
        }
      }
    }

    // Verifier.
    checkCancelled();
    phase = { started_at: now(), finished_at: '' };
    result.verifier = phase;
    await applyPhaseNetwork(environment, task, 'verifier');
    const timeoutSec =
      ('timeoutSec' in task.verifier ? task.verifier.timeoutSec : 1800) *
      (options.phaseMultipliers?.verifier ?? multiplier);
    const verifyIn = environment;
    const verdict: VerifierResult = await withLimitErrors('verifier', verifyIn, () =>
      verifier.verify({
        task,
        environment: verifyIn,
        agentResult: agentResult ?? {},
        trialDir,
        timeoutSec,
        ...(baseCommit ? { baseCommit } : {}),
        ...(signal ? { signal } : {}),
      }),
    );
    phase.finished_at = now();
    checkCancelled();
    result.verifier_result = { rewards: verdict.rewards };
    result.berth.verifier_details = verdict.details ?? null;
    if (verdict.exception)
      record(Object.assign(new Error(verdict.exception.message), { name: verdict.exception.type }));
    const details = verdict.details ?? {};
    const detailStatus = details.status;
    const reward = verdict.rewards.reward ?? 0;
    result.berth.status =
      detailStatus === 'resolved' || detailStatus === 'unresolved' || detailStatus === 'error'
        ? detailStatus
        : verdict.exception
          ? 'error'
          : reward >= 1
            ? 'resolved'
            : 'unresolved';
    result.berth.resolved = result.berth.status === 'resolved';
    const counts = (key: string) => {
      const v = details[key] as { passed?: unknown; total?: unknown } | undefined;
      return v && typeof v.passed === 'number' && typeof v.total === 'number'
        ? { passed: v.passed, total: v.total }
        : null;
    };
    result.berth.FAIL_TO_PASS = counts('FAIL_TO_PASS') ?? result.berth.FAIL_TO_PASS;
    result.berth.PASS_TO_PASS = counts('PASS_TO_PASS') ?? result.berth.PASS_TO_PASS;
    if (task.verifier.kind === 'swebench') {
      result.berth.files.test_output = 'verifier/test-output.txt';
      result.berth.files.report = 'verifier/report.json';
    }
    const notes: string[] = [];
    if (typeof details.error_reason === 'string') notes.push(details.error_reason);
    else if (result.berth.status === 'unresolved' && Array.isArray(details.tests)) {
      // Say which expected tests did not pass and why, e.g. "FAIL_TO_PASS not passed: 2 failed, 1 missing".
      for (const category of ['FAIL_TO_PASS', 'PASS_TO_PASS']) {
        const reasons = new Map<string, number>();
        for (const t of details.tests as { category?: string; passed?: boolean; reason?: string }[]) {
          if (t.category === category && !t.passed)
            reasons.set(t.reason ?? 'failed', (reasons.get(t.reason ?? 'failed') ?? 0) + 1);
        }
        if (reasons.size > 0)
          notes.push(`${category} not passed: ${[...reasons].map(([r, n]) => `${n} ${r}`).join(', ')}`);
      }
    }
    const applyMethod = result.berth.patch_apply?.method;
    if (applyMethod && applyMethod !== 'git apply') notes.push(`applied with ${applyMethod}`);
    const discarded = details.discarded_agent_changes;
    if (Array.isArray(discarded) && discarded.length > 0)
      notes.push(`discarded agent changes to ${discarded.length} test file(s)`);
    if (result.exception_info && result.exception_info.exception_type === 'AgentTimeoutError')
      notes.push('agent timed out');
    notes.push(...recordTampering(result.berth, details));
    result.berth.note = notes.join('; ') || 'ok';
  } catch (error) {
    if (phase && !phase.finished_at) phase.finished_at = now();
    if (signal?.aborted || error instanceof CancelledError) {
      result.berth.status = 'cancelled';
      result.berth.note = 'cancelled';
      record(new CancelledError('cancelled by the user'));
    } else {
      result.berth.status = 'error';
      record(error);
      result.berth.note = `${result.exception_info?.exception_type}: ${result.exception_info?.exception_message.split('\n')[0]}`;
    }
    result.berth.resolved = false;
  } finally {
    if (environment && !agentLogsCollected) await collectLogFolder(environment, 'agent', trialDir, result);
    if (environment) {
      try {
        await environment.stop();
      } catch (error) {
        record(error);
      }
    }
    await models?.finish(result).catch(record);
    result.finished_at = now();
    result.berth.duration_sec = roundSec((performance.now() - started) / 1000);
    // Harbor's verifier/reward.txt for verifiers that write none (SWE-bench: 1 resolved, 0 not).
    if (task.verifier.kind === 'swebench') await writeRewardFile(trialDir, result).catch(() => false);
    await writeJsonAtomic(join(trialDir, 'result.json'), result);
  }
  return result;
}
