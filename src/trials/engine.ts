import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent, AgentResult } from '../agents/agent.ts';
import { applyPhaseNetwork } from '../environments/docker/egress/network-switch.ts';
import { runHealthcheck } from '../environments/docker/healthcheck.ts';
import type { Environment } from '../environments/environment.ts';
import { type TrialModels, TrialModelUse } from '../models/trial-models.ts';
import { environmentVariables, resolveEnvTemplates, secretsAllowed } from '../tasks/harbor/env-template.ts';
import { aggregateStepRewards, minRewardFailure } from '../tasks/harbor/steps.ts';
import type { Task } from '../tasks/task.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { traced } from '../util/trace.ts';
import { withTimeout } from '../util/with-timeout.ts';
import { recordTampering } from '../verifiers/tampering/record.ts';
import type { Verifier, VerifierResult } from '../verifiers/verifier.ts';
import { takeAgentWork } from './agent-work.ts';
import { applyPatch, isEmptyPatch } from './apply-patch.ts';
import { collectArtifacts, uploadArtifacts } from './artifacts.ts';
import {
  AgentTimeoutError,
  AgentWorkError,
  CancelledError,
  EnvironmentRepositoryError,
  EnvironmentSetupError,
  exceptionInfo,
  now,
  VERIFIED_AGENT_ERRORS,
  verdictExceptionInfo,
} from './errors.ts';
import { EventLog } from './event-log.ts';
import { type Emit, type Phase, type TrialEmit, trialEmitter, trialEndEventOf } from './events.ts';
import { agentResultForFile, roundSec, writeRewardFile } from './file-format.ts';
import { phaseLimitError, withLimitErrors } from './limit-errors.ts';
import { planTrial, type StepPlan, type TrialPlan } from './plan.ts';
import {
  beginTrialRecord,
  type ExtendedTrialResult,
  newStepResult,
  patchSha256,
  type StepResult,
  writeStepResult,
  writeTrialResult,
} from './record.ts';
import type { ExceptionInfo, TimingInfo } from './result.ts';
import { runtimeFor, type TrialRuntime } from './runtime.ts';
import { loadTaskRef, type TrialSpec } from './spec.ts';
import { collectLogFolder, resetLogFolder } from './staging.ts';
import { mergedTestsDir, moveContents, uploadWorkdir } from './step-files.ts';
import { fileSystemBefore, tamperingVerdict, verifierEnvironment } from './verifier-environment.ts';
import { withCommandEvents, withDefaultUser } from './views.ts';

/** Default limit of the dataset's install step, in seconds. */
export const DEFAULT_INSTALL_TIMEOUT_SEC = 1800;
/** Extra seconds the trial waits past the agent timeout for an agent that enforces it itself. */
export const AGENT_TIMEOUT_GRACE_SEC = 30;

/** Where a trial writes, how it is stopped, and (optionally) the live objects it runs with. */
export interface RunTrialOptions {
  /** Host folder of this trial (created). */
  trialDir: string;
  signal?: AbortSignal;
  /** The agent, providers and verifiers; made from the spec when absent. */
  runtime?: TrialRuntime;
  /** The task, when the caller has it loaded already (it must be the spec's: same checksum). */
  task?: Task;
  /**
   * The job's model gateway and this trial's model (`-m`), when the job calls models: the
   * trial opens a session on it (the agent's key), its calls become `model-call` events.
   */
  models?: TrialModels;
}

/**
 * Runs one trial and writes its result and event log. Never throws for what happens inside
 * the trial.
 * @throws InputError when the spec's task cannot be loaded or is not the one the spec names;
 *   UsageError for an unknown agent; an error writing the trial folder.
 */
export async function runTrial(
  spec: TrialSpec,
  emit: Emit = () => {},
  options: RunTrialOptions,
): Promise<ExtendedTrialResult> {
  const task = options.task ?? (await loadTaskRef(spec.task));
  const runtime = options.runtime ?? (await runtimeFor(spec));
  const log = await EventLog.open(join(options.trialDir, 'events.jsonl'), {
    text: join(options.trialDir, 'trial.log'),
  });
  try {
    const run = new TrialRun(
      spec,
      task,
      runtime,
      (event) => {
        log.write(event);
        emit(event);
      },
      options,
    );
    return await run.run();
  } finally {
    log.close();
  }
}

/** What a step ended with, for the trial's verdict. */
interface StepOutcome {
  result: StepResult;
  verdict?: VerifierResult;
  /** The trial ended in this step without a verdict (empty patch, patch that does not apply). */
  ended?: boolean;
}

class TrialRun {
  private readonly emitEvent: TrialEmit;
  private readonly emit: Emit;
  private readonly multiplier: number;
  private readonly agentMultiplier: number;
  private readonly verifierMultiplier: number;
  private result!: ExtendedTrialResult;
  private environment: Environment | undefined;
  private baseCommit: string | undefined;
  private currentPhase: Phase | undefined;
  private readonly notes: string[] = [];
  /** The trial's session on the job's model gateway, when it calls models. */
  private models: TrialModelUse | undefined;
  private readonly exceptions: ExceptionInfo[] = [];
  /** `fileSystemBefore` of the agent's environment, taken before the current step's agent. */
  private fileSystemBefore: Set<string> | undefined;
  /**
   * The agent's set-up is the agent's code (`--agent-setup`, an installed agent's first start):
   * what it changes outside the work folder counts as the agent's. The record before it, kept for
   * the first step's agent when nothing ran between (`setupBaseline`), else what the set-up
   * changed (`setupChanges`), taken out of the first step's record (breaker8,
   * `harbor-setup-python-shim`).
   */
  private setupBaseline: Set<string> | undefined;
  private setupChanges: Set<string> | undefined;
  /** `[environment] env` resolved (every command of the environment gets it). */
  private environmentEnv: Record<string, string> | undefined;
  private allowSecrets = false;

  constructor(
    private readonly spec: TrialSpec,
    private readonly task: Task,
    private readonly runtime: TrialRuntime,
    emit: Emit,
    private readonly options: RunTrialOptions,
  ) {
    this.emit = emit;
    this.emitEvent = trialEmitter(emit, spec.job.name, spec.trial.name);
    const t = spec.timeouts;
    this.multiplier = t.multiplier;
    this.agentMultiplier = t.agentMultiplier ?? t.multiplier;
    this.verifierMultiplier = t.verifierMultiplier ?? t.multiplier;
  }

  private get agent(): Agent {
    return this.runtime.agent;
  }

  private get trialDir(): string {
    return this.options.trialDir;
  }

  private get signal(): AbortSignal | undefined {
    return this.options.signal;
  }

  private checkCancelled(): void {
    if (this.signal?.aborted) throw new CancelledError('cancelled');
  }

  /** Records an exception of the trial (the first is `exception_info`; every one is kept). */
  private record(info: ExceptionInfo): ExceptionInfo {
    this.exceptions.push(info);
    this.result.exception_info ??= info;
    return info;
  }

  /**
   * Keeps the trial's `agent_execution` / `verifier` timing up to date: a one-step trial's is its
   * step's; a multi-step trial's spans from the first step's start to the latest end (a copy:
   * each step keeps its own timestamps).
   */
  private track(kind: 'agent_execution' | 'verifier', timing: TimingInfo, multiStep: boolean): void {
    if (!multiStep) {
      this.result[kind] = timing;
      return;
    }
    this.result[kind] = {
      started_at: this.result[kind]?.started_at ?? timing.started_at,
      finished_at: timing.finished_at,
    };
  }

  /**
   * Runs `body` as phase `phase` (events around it). `timing` receives its start and end, for
   * the phases result.json times.
   */
  private async phase<T>(
    phase: Phase,
    step: string | null,
    body: () => Promise<T>,
    timing?: TimingInfo,
  ): Promise<T> {
    this.checkCancelled();
    const started = performance.now();
    const stepField = step ? { step } : {};
    this.currentPhase = phase;
    this.emitEvent({ type: 'phase-start', phase, ...stepField });
    if (timing) timing.started_at = now();
    try {
      const value = await body();
      this.emitEvent({
        type: 'phase-end',
        phase,
        ...stepField,
        duration_sec: roundSec((performance.now() - started) / 1000),
        exception: null,
      });
      return value;
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      this.emitEvent({
        type: 'phase-end',
        phase,
        ...stepField,
        duration_sec: roundSec((performance.now() - started) / 1000),
        exception: { type: e.name || 'Error', message: e.message },
      });
      throw error;
    } finally {
      if (timing) timing.finished_at = now();
      this.currentPhase = undefined;
    }
  }

  async run(): Promise<ExtendedTrialResult> {
    const started = performance.now();
    const { spec, task } = this;
    this.result = await beginTrialRecord({ spec, task, trialDir: this.trialDir, agent: this.agent.info });
    this.models = TrialModelUse.open(this.options.models, {
      trialName: spec.trial.name,
      trialDir: this.trialDir,
      agent: this.agent.info,
      emit: this.emitEvent,
    });
    // Its token works during agent phases only (agentStep resumes it with a new one).
    this.models?.session.suspend();
    const agentInfo = this.agent.info;
    this.emitEvent({
      type: 'trial-start',
      task: task.name,
      attempt: spec.trial.attempt,
      agent: { name: agentInfo.name, version: agentInfo.version, model: agentInfo.modelName ?? null },
    });
    const verifier = this.runtime.verifiers.find((v) => v.kind === task.verifier.kind);
    const expected = verifier?.expectedCounts?.(task);
    if (expected) {
      this.result.berth.FAIL_TO_PASS = expected.FAIL_TO_PASS;
      this.result.berth.PASS_TO_PASS = expected.PASS_TO_PASS;
    }
    try {
      await this.runPlan(planTrial(task));
    } catch (error) {
      this.fail(error);
    } finally {
      await this.stopEnvironment().catch((error) => this.record(exceptionInfo(error)));
      await this.models?.finish(this.result).catch((error) => this.record(exceptionInfo(error)));
      await rm(join(this.trialDir, '.verifier-env'), { recursive: true, force: true }).catch(() => {});
      if (this.exceptions.length > 1) this.result.berth.exceptions = this.exceptions;
      this.result.finished_at = now();
      this.result.berth.duration_sec = roundSec((performance.now() - started) / 1000);
      // Harbor's verifier/reward.txt for verifiers that write none (SWE-bench: 1 resolved, 0 not).
      if (verifier?.rewardFileByEngine) await writeRewardFile(this.trialDir, this.result).catch(() => false);
      const result = this.result;
      await traced('engine: result.json', () => writeTrialResult(this.trialDir, result));
    }
    this.emit(trialEndEventOf(this.result, this.spec.job.name));
    return this.result;
  }

  /** Records a crash or a cancellation of the trial. */
  private fail(error: unknown): void {
    const berth = this.result.berth;
    if (this.signal?.aborted || error instanceof CancelledError) {
      berth.status = 'cancelled';
      berth.note = 'cancelled';
      if (!this.result.exception_info)
        this.record(exceptionInfo(new CancelledError('cancelled by the user')));
    } else {
      berth.status = 'error';
      this.record(exceptionInfo(error));
      const e = this.result.exception_info;
      berth.note = [...this.notes, `${e?.exception_type}: ${e?.exception_message.split('\n')[0]}`].join('; ');
    }
    berth.resolved = false;
  }

  private async runPlan(plan: TrialPlan): Promise<void> {
    // Templates first: a missing variable or a secret without consent fails before anything starts.
    const allowSecrets = this.spec.allowEnvSecrets === true || secretsAllowed();
    this.allowSecrets = allowSecrets;
    this.environmentEnv = environmentVariables(this.task.environment, allowSecrets);
    const solutionEnv = resolveEnvTemplates(plan.solutionEnv, { section: '[solution] env', allowSecrets });
    // Harbor's `--ve` values (the job's `verifier.env`) go over the task's and its steps'.
    const jobVerifierEnv = this.spec.verification.env;
    const verifierEnvs = plan.steps.map((s) => {
      const own = s.verifier.envTemplates
        ? resolveEnvTemplates(s.verifier.envTemplates.env, {
            section: s.verifier.envTemplates.section,
            allowSecrets,
          })
        : undefined;
      return jobVerifierEnv ? { ...(own ?? {}), ...jobVerifierEnv } : own;
    });
    const environmentSetup: TimingInfo = { started_at: '', finished_at: '' };
    this.result.environment_setup = environmentSetup;
    await this.phase('environment', null, () => this.startEnvironment('install.log', true), environmentSetup);
    if (plan.healthcheck) {
      const hc = plan.healthcheck;
      try {
        const tries = await this.phase('healthcheck', null, () =>
          runHealthcheck(this.liveEnvironment(), hc, this.signal ? { signal: this.signal } : {}),
        );
        this.notes.push(`healthcheck passed after ${tries} tr${tries === 1 ? 'y' : 'ies'}`);
      } finally {
        // The environment is set up once its healthcheck passed (Harbor times them together).
        environmentSetup.finished_at = now();
      }
    }
    await this.agentSetup(plan.steps[0]);

    const outcomes: StepOutcome[] = [];
    for (const [index, step] of plan.steps.entries()) {
      this.checkCancelled();
      const isLast = index === plan.steps.length - 1;
      const outcome = await this.runStep(plan, step, {
        isLast,
        solutionEnv,
        verifierEnv: verifierEnvs[index],
      });
      outcomes.push(outcome);
      if (outcome.ended) return;
      if (plan.multiStep) {
        const prefix = `step ${outcome.result.step_name}: `;
        const e = outcome.result.exception_info;
        if (e) this.notes.push(`${prefix}${e.exception_type}`);
        for (const note of outcome.verdict?.notes ?? []) this.notes.push(`${prefix}${note}`);
        await this.archiveStep(outcome.result, isLast);
        if (!isLast && !this.spec.verification.disable && this.gate(step, outcome.result)) break;
      }
    }
    if (plan.multiStep) this.concludeSteps(plan, outcomes);
    else this.concludeSingle(outcomes[0] as StepOutcome);
  }

  private liveEnvironment(): Environment {
    if (!this.environment) throw new Error('the agent environment is gone');
    return this.environment;
  }

  /**
   * Starts the task's environment and runs the dataset's install step in it. The first start
   * records the isolation and the install; a restart (grading in a fresh environment) logs its
   * install apart.
   */
  private async startEnvironment(logName: string, first: boolean): Promise<void> {
    const { task } = this;
    const provider = this.runtime.providers.find((p) => p.kind === task.environment.kind);
    if (!provider) throw new Error(`no environment provider for kind ${task.environment.kind}`);
    if (!this.runtime.verifiers.some((v) => v.kind === task.verifier.kind))
      throw new Error(`no verifier for kind ${task.verifier.kind}`);
    const tool = this.agent.tool;
    const environment = await provider.start({
      task,
      jobId: this.spec.job.name,
      trialDir: this.trialDir,
      // The agent's files (installed agents), once per base image; not in a grading environment.
      ...(tool && first ? { tool } : {}),
      ...(this.models && first ? { modelGatewayDir: this.models.session.gatewayDir } : {}),
      ...(this.environmentEnv ? { env: this.environmentEnv } : {}),
      ...(this.signal ? { signal: this.signal } : {}),
    });
    this.environment = environment;
    await this.install(environment, logName, first);
    if (first) {
      this.result.berth.isolated = environment.isolated;
      this.result.berth.isolation_method = environment.isolated
        ? (environment.isolationMethodName ?? environment.kind)
        : null;
      if (environment.limits) this.result.berth.limits = environment.limits.record;
      const cache = environment.installCache;
      if (cache)
        this.result.berth.install_cache = {
          hit: cache.hit,
          ...(cache.method ? { method: cache.method } : {}),
          ...(cache.note ? { note: cache.note } : {}),
        };
    }
    await this.checkRepository(environment);
    this.baseCommit = await this.baseCommitOf(environment);
  }

  /**
   * A SWE-bench row's patch is applied to the repository at the environment's work folder: an
   * environment without one there (an image that does not carry the repository at the row's
   * path, e.g. `--image-map '*=<plain base>'`) is the environment's error, before any agent
   * runs, not a patch that fails to apply.
   * @throws EnvironmentRepositoryError naming the image, the folder and what to do.
   */
  private async checkRepository(environment: Environment): Promise<void> {
    if (this.task.verifier.kind !== 'swebench' || environment.baseCommit !== undefined) return;
    const probe = await environment.exec(
      'cd -P . 2>/dev/null && pwd -P && git rev-parse --show-toplevel 2>&1',
      { timeoutSec: 60, ...(this.signal ? { signal: this.signal } : {}) },
    );
    this.checkCancelled();
    const [here, top] = probe.output.trim().split('\n');
    if (probe.exitCode === 0 && here !== undefined && top === here) return;
    const image = environment.image ? `image ${environment.image}` : `the ${environment.kind} environment`;
    const found =
      probe.exitCode === 0 && top !== undefined
        ? `its git repository starts at ${top}`
        : (probe.output.trim().split('\n').at(-1) ?? '') || 'the folder is missing';
    throw new EnvironmentRepositoryError(
      `${image} has no git repository at ${environment.workdir} (${found}), where task ${this.task.name} expects the repository at its base commit. Use the row's instance image (or --image-map it onto an image with the repository checked out at ${environment.workdir}), or run the row without Docker (-e local) so berth builds the repository from the row's snapshot.`,
    );
  }

  /** Runs the dataset's install step in `environment` (a failure is an EnvironmentSetupError). */
  private async install(environment: Environment, logName: string, first: boolean): Promise<void> {
    const { task } = this;
    const install = 'install' in task.environment ? task.environment.install : undefined;
    if (typeof install === 'string' && install.trim() !== '' && environment.installCache?.hit) {
      // Install once (issue 18): the environment started from the state after this install.
      if (first)
        this.result.berth.install = { exit_code: 0, timed_out: false, duration_sec: 0, cached: true };
    } else if (typeof install === 'string' && install.trim() !== '') {
      const run = await environment.exec(install, {
        network: { mode: 'public' },
        setup: true,
        timeoutSec: DEFAULT_INSTALL_TIMEOUT_SEC * this.multiplier,
        outputFile: join(this.trialDir, 'setup', logName),
        ...(this.signal ? { signal: this.signal } : {}),
      });
      if (first) {
        this.result.berth.files.install_log = `setup/${logName}`;
        this.result.berth.install = {
          exit_code: run.exitCode,
          timed_out: run.timedOut,
          duration_sec: roundSec(run.durationSec),
        };
      }
      this.checkCancelled();
      // A resource limit hit by the install is its error (EnvironmentSetupOutOfMemoryError, ...).
      const limit = await phaseLimitError('environment-setup', environment);
      if (limit) throw limit;
      if (run.exitCode !== 0) {
        throw new EnvironmentSetupError(
          `install command ${run.timedOut ? 'timed out' : `exited ${run.exitCode}`}: ${run.output.trim().split('\n').slice(-3).join(' | ')}`,
        );
      }
      // Before any agent code: the state after the install becomes the cache entry.
      await environment.installCache?.save();
    }
  }

  /**
   * The base commit the environment made; else, for a verifier that resets files to the base
   * (`needsBaseCommit`), whatever HEAD is before the agent runs.
   */
  private async baseCommitOf(environment: Environment): Promise<string | undefined> {
    if (environment.baseCommit !== undefined) return environment.baseCommit;
    const verifier = this.runtime.verifiers.find((v) => v.kind === this.task.verifier.kind);
    if (!verifier?.needsBaseCommit) return undefined;
    const head = await environment.exec('git rev-parse --verify -q HEAD', { timeoutSec: 60 });
    return head.exitCode === 0 ? head.output.trim() : undefined;
  }

  private async stopEnvironment(): Promise<void> {
    const environment = this.environment;
    this.environment = undefined;
    await environment?.stop();
  }

  /**
   * Harbor's agent set-up: once per trial, before the first step, timed as `agent_setup` for
   * every agent (Harbor records it always; an agent without a set-up does nothing in it).
   */
  private async agentSetup(first: StepPlan | undefined): Promise<void> {
    const setup = this.agent.setup;
    const timing: TimingInfo = { started_at: '', finished_at: '' };
    this.result.agent_setup = timing;
    if (!setup) {
      timing.started_at = now();
      timing.finished_at = timing.started_at;
      return;
    }
    const live = this.liveEnvironment();
    const environment = withCommandEvents(live, this.emitEvent, () => this.currentPhase);
    const baseline = await fileSystemBefore(live);
    try {
      await this.phase(
        'agent-setup',
        null,
        () =>
          // A resource limit hit during the set-up is its error (AgentSetupOutOfMemoryError, ...).
          withLimitErrors('agent-setup', live, () =>
            setup.call(this.agent, {
              task: this.task,
              environment,
              attempt: this.spec.trial.attempt,
              logDir: join(this.trialDir, 'agent'),
              // Harbor's `--agent-setup-timeout-multiplier`, else the job's multiplier.
              timeoutMultiplier: this.spec.timeouts.agentSetupMultiplier ?? this.multiplier,
              emit: this.emitEvent,
              ...(this.models ? { models: this.models.session } : {}),
              ...(this.signal ? { signal: this.signal } : {}),
            }),
          ),
        timing,
      );
    } finally {
      // What the set-up wrote in the agent's log folder, copied out as data (src/trials/staging.ts).
      await collectLogFolder(live, 'agent', this.trialDir, this.result, {
        timeoutSec: AGENT_TIMEOUT_GRACE_SEC,
      });
    }
    if (!baseline) return;
    // The first step's own set-up (the task's, trusted) runs before its agent: the set-up's changes
    // are told apart by one more record; else the record before the set-up serves that agent.
    if (first && stepHasSetup(first)) {
      const after = await fileSystemBefore(live);
      this.setupChanges = new Set([...(after ?? [])].filter((k) => !baseline.has(k)));
    } else this.setupBaseline = baseline;
  }

  /** One step: prepare, agent, patch, artifacts, verifier. */
  private async runStep(
    plan: TrialPlan,
    step: StepPlan,
    context: {
      isLast: boolean;
      solutionEnv: Record<string, string>;
      verifierEnv: Record<string, string> | undefined;
    },
  ): Promise<StepOutcome> {
    const stepName = step.name;
    const target = newStepResult(stepName ?? this.task.name);
    if (plan.multiStep) {
      this.result.step_results ??= [];
      this.result.step_results.push(target);
    }
    const prefix = stepName ? `step ${stepName}: ` : '';
    const setupOk = await this.stepSetup(step, target, prefix);
    let agentResult: AgentResult | undefined;
    if (setupOk) {
      try {
        agentResult = await this.agentStep(plan, step, target, prefix, context.solutionEnv);
        if (!plan.multiStep) {
          if (agentResult === undefined && this.verifierOf(step).needsAgentResult)
            throw new Error('the agent returned no result');
          if (agentResult?.patch !== undefined) {
            const patch = agentResult.patch;
            const fresh = agentResult.gradeInFreshEnvironment === true;
            const ended = await this.phase('patch', stepName, () => this.patchPhase(patch, fresh));
            if (ended) return { result: target, ended: true };
          } else if (this.verifierOf(step).gradesInFreshEnvironment) {
            // The agent acted in its environment: its work goes, as a diff, into a fresh one.
            const taken = await this.phase('patch', stepName, () => this.workPhase(plan.healthcheck));
            if (taken.ended) return { result: target, ended: true };
            agentResult = { ...(agentResult ?? {}), patch: taken.patch, gradeInFreshEnvironment: true };
          }
        }
      } catch (error) {
        // The agent's diff (command, deckhand) or its work folder (workPhase) cannot be taken.
        if (!(error instanceof AgentWorkError) || this.signal?.aborted) throw error;
        return this.agentWorkFailed(error, target, prefix);
      }
    }
    // The task's artifacts, then the job's (Harbor's `--artifact`).
    const jobArtifacts = (this.spec.artifacts ?? []).map((a) =>
      typeof a === 'string'
        ? { source: a }
        : {
            source: a.source,
            ...(a.destination ? { destination: a.destination } : {}),
            ...(a.exclude ? { exclude: a.exclude } : {}),
          },
    );
    if (step.artifacts || jobArtifacts.length > 0) {
      const artifacts = [...(step.artifacts ?? []), ...jobArtifacts];
      await this.phase('artifacts', stepName, () =>
        collectArtifacts(this.liveEnvironment(), join(this.trialDir, 'artifacts'), artifacts),
      );
    }
    // Harbor verifies even after a recorded agent error; a failed step set-up skips it, and so
    // does `--disable-verification` (no reward recorded).
    if (!setupOk || this.spec.verification.disable) return { result: target };
    const timing: TimingInfo = { started_at: '', finished_at: '' };
    target.verifier = timing;
    let verdict: VerifierResult;
    try {
      verdict = await this.phase(
        'verifier',
        stepName,
        () => this.verify(step, agentResult ?? {}, context.verifierEnv, context.isLast, plan.healthcheck),
        timing,
      );
    } finally {
      this.track('verifier', timing, plan.multiStep);
    }
    this.checkCancelled();
    this.emitEvent({
      type: 'verdict',
      ...(stepName ? { step: stepName } : {}),
      status:
        verdict.status ??
        (verdict.exception ? 'error' : (verdict.rewards.reward ?? 0) >= 1 ? 'resolved' : 'unresolved'),
      rewards: verdict.rewards,
      FAIL_TO_PASS: verdict.FAIL_TO_PASS ?? null,
      PASS_TO_PASS: verdict.PASS_TO_PASS ?? null,
      reason: verdict.reason ?? verdict.exception?.message ?? null,
    });
    if (verdict.exception) {
      const info = this.record(verdictExceptionInfo(verdict.exception, prefix));
      target.exception_info ??= info;
    } else target.verifier_result = { rewards: verdict.rewards };
    target.berth = { verifier_details: verdict.details ?? null };
    // What the verifier's copy of /logs/verifier left out (the caps of src/util/safe-fs.ts).
    const notCopied = verdict.details?.not_copied;
    if (Array.isArray(notCopied) && notCopied.length > 0) {
      this.result.berth.not_copied ??= {};
      this.result.berth.not_copied.verifier = [
        ...(this.result.berth.not_copied.verifier ?? []),
        ...notCopied.map(String),
      ];
    }
    return { result: target, verdict };
  }

  /**
   * The agent's work cannot be taken (`AgentWorkError`: git refused its work folder, the diff
   * passed 50 MiB...): the agent's failure, recorded as its phase's. The trial ends with reward
   * 0, not resolved (fail closed); its result has a verdict, so neither a retry (the error is
   * excluded by default) nor a resume runs it again.
   */
  private agentWorkFailed(error: AgentWorkError, target: StepResult, prefix: string): StepOutcome {
    const info = this.record(exceptionInfo(error, prefix));
    target.exception_info ??= info;
    const berth = this.result.berth;
    berth.status = 'error';
    berth.resolved = false;
    berth.note = [...this.notes, `${info.exception_type}: ${info.exception_message.split('\n')[0]}`].join(
      '; ',
    );
    this.result.verifier_result = { rewards: { reward: 0 } };
    return { result: target, ended: true };
  }

  private verifierOf(step: StepPlan): Verifier {
    const kind = step.verifier.task.verifier.kind;
    const verifier = this.runtime.verifiers.find((v) => v.kind === kind);
    if (!verifier) throw new Error(`no verifier for kind ${kind}`);
    return verifier;
  }

  /**
   * A step's preparation: its `workdir/` uploaded (owner and mode kept as the image made
   * them), its `setup.sh` run as the agent user, its healthcheck. A failure is the step's
   * exception: its agent and verifier do not run.
   * @returns whether the step may go on.
   */
  private async stepSetup(step: StepPlan, target: StepResult, prefix: string): Promise<boolean> {
    if (!stepHasSetup(step)) return true;
    try {
      await this.phase('step-setup', step.name, async () => {
        const env = this.liveEnvironment();
        if (step.workdirDir) await uploadWorkdir(env, step, this.trialDir, this.signal);
        if (step.healthcheck)
          await runHealthcheck(
            withDefaultUser(env, step.agentUser),
            step.healthcheck,
            this.signal ? { signal: this.signal } : {},
          );
      });
      return true;
    } catch (error) {
      if (error instanceof CancelledError || this.signal?.aborted) throw error;
      target.exception_info = this.record(exceptionInfo(error, prefix));
      return false;
    }
  }

  /**
   * The agent of a step, with its timeout (and a grace for an agent that stops itself and
   * hands back what it did). An error Harbor records and verifies after (a timeout, a non-zero
   * exit; any error in a multi-step task) is the step's exception; any other ends the trial.
   */
  private async agentStep(
    plan: TrialPlan,
    step: StepPlan,
    target: StepResult,
    prefix: string,
    solutionEnv: Record<string, string>,
  ): Promise<AgentResult | undefined> {
    const env = this.liveEnvironment();
    const timing: TimingInfo = { started_at: '', finished_at: '' };
    target.agent_execution = timing;
    const timeoutSec =
      step.agentTimeoutSec !== undefined ? step.agentTimeoutSec * this.agentMultiplier : undefined;
    const agentTask: Task =
      step.agentTask.solution.kind === 'script' && Object.keys(solutionEnv).length > 0
        ? { ...step.agentTask, solution: { ...step.agentTask.solution, env: solutionEnv } }
        : step.agentTask;
    const environment = withCommandEvents(
      withDefaultUser(env, step.agentUser),
      this.emitEvent,
      () => this.currentPhase,
    );
    // The engine's record of the environment's file system before the agent (what it changes
    // outside its work folder decides where the verifier runs: src/trials/verifier-environment.ts).
    // The agent's set-up (first step) is the agent's too: see `setupBaseline`.
    const setupChanges = this.setupChanges;
    this.fileSystemBefore = this.setupBaseline ?? (await fileSystemBefore(env));
    if (this.fileSystemBefore && setupChanges)
      for (const change of setupChanges) this.fileSystemBefore.delete(change);
    this.setupBaseline = undefined;
    this.setupChanges = undefined;
    let agentResult: AgentResult | undefined;
    // Work taken into a fresh environment (workPhase) is what the folder holds when the agent
    // ends: from then on nothing of the agent's runs, not during the phase's limit checks, nor
    // while its logs are copied and the fresh environment starts (src/trials/agent-work.ts).
    const takesWork =
      !plan.multiStep &&
      this.runtime.verifiers.find((v) => v.kind === step.verifier.task.verifier.kind)
        ?.gradesInFreshEnvironment === true;
    const haltAfter = async (running: Promise<AgentResult>): Promise<AgentResult> => {
      let left: AgentResult | undefined;
      try {
        left = await running;
        return left;
      } catch (error) {
        left = error instanceof AgentTimeoutError ? error.partialResult : undefined;
        throw error;
      } finally {
        if (takesWork && left?.patch === undefined) await env.halt?.();
      }
    };
    // The model token lives for the agent phase only: a new one for each step's agent.
    this.models?.session.resume();
    try {
      agentResult = await this.phase(
        'agent',
        step.name,
        async () => {
          // Per-phase network (Harbor's [agent] network_mode): switched on the running container.
          await applyPhaseNetwork(env, step.networkTask, 'agent');
          // A resource limit hit by the agent is its error (AgentOutOfMemoryError, ...), whatever it threw.
          return withLimitErrors('agent', env, () =>
            haltAfter(
              withTimeout(
                this.agent.run({
                  task: agentTask,
                  environment,
                  attempt: this.spec.trial.attempt,
                  logDir: join(this.trialDir, 'agent'),
                  emit: this.emitEvent,
                  ...(this.models ? { models: this.models.session } : {}),
                  ...(timeoutSec !== undefined ? { timeoutSec } : {}),
                  ...(this.signal ? { signal: this.signal } : {}),
                  ...(takesWork ? { haltsOnReturn: true } : {}),
                }),
                timeoutSec !== undefined ? timeoutSec + AGENT_TIMEOUT_GRACE_SEC : undefined,
                () => new AgentTimeoutError(`the agent did not finish within ${timeoutSec} s`),
              ),
            ),
          );
        },
        timing,
      );
    } catch (error) {
      if (error instanceof CancelledError || this.signal?.aborted) throw error;
      const name = error instanceof Error ? error.name : '';
      if (!plan.multiStep && !VERIFIED_AGENT_ERRORS.has(name)) throw error;
      target.exception_info = this.record(exceptionInfo(error, prefix));
      agentResult = error instanceof AgentTimeoutError ? error.partialResult : undefined;
    } finally {
      // No verifier, step set-up or later step can call a model with this phase's token.
      this.models?.session.suspend();
      this.track('agent_execution', timing, plan.multiStep);
      // The agent's log folder, copied out as data before anything else happens to its
      // environment (src/trials/staging.ts: no link followed, what was left out recorded).
      await collectLogFolder(env, 'agent', this.trialDir, this.result, {
        timeoutSec: AGENT_TIMEOUT_GRACE_SEC,
      });
    }
    this.checkCancelled();
    if (agentResult) {
      const { patch: _patch, gradeInFreshEnvironment: _fresh, ...rest } = agentResult;
      target.agent_result = agentResultForFile(rest);
      if (!plan.multiStep) this.result.agent_result = target.agent_result;
      if (agentResult.modelName && !this.result.agent_info.model_info)
        this.result.agent_info.model_info = { name: agentResult.modelName };
    }
    // A one-step agent's model session ends with it: its token does not outlive the agent phase.
    if (!plan.multiStep) await this.models?.finish(this.result);
    return agentResult;
  }

  /**
   * The agent's patch: recorded, then applied (in a fresh environment when the agent acted in
   * this one and asks for it, as SWE-bench applies predictions in a new container).
   * @returns true when the trial ends here (an empty patch, a patch that does not apply).
   */
  private async patchPhase(patch: string, fresh: boolean): Promise<boolean> {
    const berth = this.result.berth;
    berth.patch_sha256 = patchSha256(patch);
    await writeFileAtomic(join(this.trialDir, 'agent', 'patch.diff'), patch);
    berth.files.patch = 'agent/patch.diff';
    if (isEmptyPatch(patch)) {
      if (this.spec.verification.verifyEmptyPatch) return false;
      berth.status = 'empty_patch';
      berth.note = 'empty patch';
      this.result.verifier_result = { rewards: { reward: 0 } };
      return true;
    }
    if (fresh) {
      // Only the diff crosses over: whatever else the agent left cannot reach the verifier.
      await this.stopEnvironment();
      this.checkCancelled();
      await this.startEnvironment('install-grading.log', false);
    }
    const applied = await applyPatch(this.liveEnvironment(), patch, {
      ...(this.baseCommit ? { base: this.baseCommit } : {}),
      ...(this.signal ? { signal: this.signal } : {}),
    });
    await writeFileAtomic(join(this.trialDir, 'agent', 'apply.log'), applied.log);
    berth.files.apply_log = 'agent/apply.log';
    berth.patch_apply = { applied: applied.applied, method: applied.method ?? null };
    this.checkCancelled();
    if (applied.applied) return false;
    berth.status = 'patch_failed';
    berth.note = 'patch does not apply';
    this.result.verifier_result = { rewards: { reward: 0 } };
    return true;
  }

  /**
   * The work of an agent that acted in its environment, for a verifier that grades it in a fresh
   * one (`Verifier.gradesInFreshEnvironment`): the agent's environment is halted (nothing of the
   * agent's runs from here on), a fresh environment of the task is started, the
   * agent's work folder is taken into it as a diff without running anything of the agent's
   * (src/trials/agent-work.ts), the agent's environment is stopped, and the diff is graded as a
   * `command` agent's SWE-bench diff (`patchPhase`) in the fresh one.
   */
  private async workPhase(
    healthcheck: TrialPlan['healthcheck'],
  ): Promise<{ ended: true } | { ended: false; patch: string }> {
    const agentEnvironment = this.liveEnvironment();
    // Before the fresh environment starts: what the agent left running stops writing now.
    await agentEnvironment.halt?.();
    const fresh = await this.startVerifierCopy(healthcheck);
    let patch: string;
    const base = fresh.baseCommit ?? this.baseCommit;
    try {
      if (base === undefined) throw new Error("no base commit to take the agent's work against");
      patch = await traced('engine: takeAgentWork', () =>
        takeAgentWork(agentEnvironment, fresh, base, this.signal),
      );
    } catch (error) {
      await fresh.stop().catch(() => {});
      throw error;
    }
    await this.stopEnvironment();
    this.environment = fresh;
    this.baseCommit = base;
    this.checkCancelled();
    if (await this.patchPhase(patch, false)) return { ended: true };
    return { ended: false, patch };
  }

  /**
   * Runs the step's verifier: in the agent's environment (under the verifier's network), or in
   * a separate environment of its own that receives the artifacts (after the last step, the
   * agent's environment is stopped first).
   */
  private async verify(
    step: StepPlan,
    agentResult: AgentResult,
    env: Record<string, string> | undefined,
    isLast: boolean,
    healthcheck: TrialPlan['healthcheck'],
  ): Promise<VerifierResult> {
    const verifier = this.verifierOf(step);
    const timeoutSec = step.verifier.timeoutSec * this.verifierMultiplier;
    const merged = step.verifier.testsDirs ? await mergedTestsDir(step.verifier.testsDirs) : undefined;
    try {
      const spec = step.verifier.task.verifier;
      const verifierSpec = {
        ...spec,
        ...(merged && spec.kind === 'harbor' ? { testsDir: merged.dir } : {}),
        ...('timeoutSec' in spec ? { timeoutSec } : {}),
        ...(env ? { env } : {}),
      } as Task['verifier'];
      const separate = step.verifier.separate;
      if (separate) {
        if (isLast) await this.stopEnvironment();
        const task = {
          ...separate.task,
          verifier: { ...separate.task.verifier, timeoutSec, ...(env ? { env } : {}) },
        } as Task;
        return await this.verifySeparately(verifier, task, separate.key, step, agentResult, timeoutSec);
      }
      // An agent that acted in the environment: none of its processes alive, and a change it made
      // outside its work folder moves the verifier to a fresh environment (src/trials/verifier-environment.ts).
      const chosen =
        agentResult.patch === undefined
          ? await traced('engine: verifierEnvironment', () =>
              verifierEnvironment(this.liveEnvironment(), {
                before: this.fileSystemBefore,
                start: () => this.startVerifierCopy(healthcheck),
                keepOriginal: !isLast,
                result: this.result,
                inPlace: this.spec.verification.rules === 'harbor',
              }),
            )
          : { environment: this.liveEnvironment(), killed: 0 };
      if ('failClosed' in chosen) return tamperingVerdict(chosen.failClosed);
      const { environment, fresh, finding, note } = chosen;
      try {
        await traced('engine: applyPhaseNetwork', () =>
          applyPhaseNetwork(environment, step.networkTask, 'verifier'),
        );
        // A resource limit hit by the tests is the verifier's error (VerifierOutOfMemoryError, ...).
        const verdict = await traced('engine: verify', () =>
          withLimitErrors('verifier', environment, () =>
            verifier.verify({
              task: { ...step.verifier.task, verifier: verifierSpec },
              environment: withCommandEvents(environment, this.emitEvent, () => this.currentPhase),
              agentResult,
              trialDir: this.trialDir,
              timeoutSec,
              ...(this.baseCommit ? { baseCommit: this.baseCommit } : {}),
              ...(this.signal ? { signal: this.signal } : {}),
            }),
          ),
        );
        if (chosen.killed > 0)
          verdict.details = { ...(verdict.details ?? {}), killed_agent_processes: chosen.killed };
        // What the agent left where tools keep caches, removed before verifying (verifier-environment.ts).
        if (chosen.cleared)
          verdict.details = {
            ...(verdict.details ?? {}),
            cleared_agent_scratch: { paths: chosen.cleared.slice(0, 20), count: chosen.cleared.length },
          };
        if (finding) verdict.notes = [...(verdict.notes ?? []), `tampering: ${finding.message}`];
        if (note) verdict.notes = [...(verdict.notes ?? []), note];
        return verdict;
      } finally {
        await fresh?.stop();
      }
    } finally {
      await merged?.cleanup();
    }
  }

  /** A fresh environment of the task for the verifier (the agent's own is not replaced), healthchecked. */
  private async startVerifierCopy(healthcheck: TrialPlan['healthcheck']): Promise<Environment> {
    const provider = this.runtime.providers.find((p) => p.kind === this.task.environment.kind);
    if (!provider) throw new Error(`no environment provider for kind ${this.task.environment.kind}`);
    const environment = await provider.start({
      task: this.task,
      jobId: this.spec.job.name,
      trialDir: this.trialDir,
      ...(this.environmentEnv ? { env: this.environmentEnv } : {}),
      ...(this.signal ? { signal: this.signal } : {}),
    });
    try {
      await this.install(environment, 'install-verifier.log', false);
      if (healthcheck)
        await runHealthcheck(environment, healthcheck, this.signal ? { signal: this.signal } : {});
    } catch (error) {
      await environment.stop().catch(() => {});
      throw error;
    }
    return environment;
  }

  /**
   * A separate verifier environment (Harbor's `_run_separate_verifier`): started from its own
   * task (a container built from the tests folder), the step's artifacts copied in, its
   * `verifier/` output moved into the trial's.
   */
  private async verifySeparately(
    verifier: Verifier,
    task: Task,
    key: string,
    step: StepPlan,
    agentResult: AgentResult,
    timeoutSec: number,
  ): Promise<VerifierResult> {
    const provider = this.runtime.providers.find((p) => p.kind === task.environment.kind);
    if (!provider)
      throw new Error(`a separate verifier environment needs the ${task.environment.kind} provider`);
    const subDir = join(this.trialDir, '.verifier-env', key.replace(/[^A-Za-z0-9._-]/g, '_'));
    await rm(subDir, { recursive: true, force: true });
    const verifierEnv = environmentVariables(task.environment, this.allowSecrets);
    const venv = await provider.start({
      task,
      jobId: this.spec.job.name,
      trialDir: subDir,
      ...(verifierEnv ? { env: verifierEnv } : {}),
      ...(this.signal ? { signal: this.signal } : {}),
    });
    let verdict: VerifierResult;
    try {
      await uploadArtifacts(venv, join(this.trialDir, 'artifacts'), step.artifacts ?? []);
      verdict = await withLimitErrors('verifier', venv, () =>
        verifier.verify({
          task,
          environment: withCommandEvents(venv, this.emitEvent, () => this.currentPhase),
          agentResult,
          trialDir: subDir,
          timeoutSec,
          ...(this.signal ? { signal: this.signal } : {}),
        }),
      );
    } finally {
      await venv.stop();
    }
    await moveContents(join(subDir, 'verifier'), join(this.trialDir, 'verifier'));
    await rm(subDir, { recursive: true, force: true });
    return { ...verdict, details: { ...(verdict.details ?? {}), verifier_environment: 'separate' } };
  }

  /** Moves a step's `agent/`, `verifier/` and `artifacts/` to `steps/<name>/` and writes its result. */
  private async archiveStep(target: StepResult, isLast: boolean): Promise<void> {
    const stepDir = join(this.trialDir, 'steps', target.step_name);
    for (const d of ['agent', 'verifier', 'artifacts'])
      await moveContents(join(this.trialDir, d), join(stepDir, d));
    // The next step starts with empty log folders in the environment too (Harbor moves its mounted ones).
    if (this.environment && !isLast) {
      await resetLogFolder(this.environment, 'agent');
      await resetLogFolder(this.environment, 'artifacts');
    }
    await writeStepResult(this.trialDir, target);
  }

  /**
   * Whether the steps after this one are skipped: it ended without a verdict, or missed its
   * `min_reward` (Harbor's gating). The reason is recorded on the step and in the note.
   */
  private gate(step: StepPlan, target: StepResult): boolean {
    let stop: string | undefined;
    if (target.exception_info && !target.verifier_result) stop = 'failed';
    else if (step.minReward !== undefined)
      stop = minRewardFailure(target.verifier_result?.rewards, step.minReward);
    if (!stop) return false;
    target.berth = { ...(target.berth ?? {}), stopped_after: stop };
    this.notes.push(`stopped after step ${target.step_name}: ${stop}`);
    return true;
  }

  /** The verdict of a one-step trial: the verifier's, with the notes of what happened on the way. */
  private concludeSingle(outcome: StepOutcome): void {
    const { result } = this;
    const berth = result.berth;
    const verdict = outcome.verdict;
    if (!verdict && this.spec.verification.disable && !result.exception_info) {
      // --disable-verification: the agent ran, nothing was verified; not resolved, no reward.
      berth.status = 'unresolved';
      berth.note = [...this.notes, 'not verified (--disable-verification)'].join('; ');
      return;
    }
    if (!verdict) {
      // The step's set-up failed: no verdict.
      berth.status = 'error';
      const e = result.exception_info;
      berth.note = [...this.notes, e ? `${e.exception_type}: ${e.exception_message.split('\n')[0]}` : '']
        .filter(Boolean)
        .join('; ');
      return;
    }
    result.verifier_result = { rewards: verdict.rewards };
    berth.verifier_details = verdict.details ?? null;
    berth.status =
      verdict.status ??
      (verdict.exception ? 'error' : (verdict.rewards.reward ?? 0) >= 1 ? 'resolved' : 'unresolved');
    berth.resolved = berth.status === 'resolved';
    if (verdict.FAIL_TO_PASS) berth.FAIL_TO_PASS = verdict.FAIL_TO_PASS;
    if (verdict.PASS_TO_PASS) berth.PASS_TO_PASS = verdict.PASS_TO_PASS;
    Object.assign(berth.files, verdict.files ?? {});
    berth.note = singleNote(this.notes, verdict, berth, this.exceptions).join('; ') || 'ok';
  }

  /**
   * The verdict of a multi-step trial: the steps' rewards by the task's strategy. A step that
   * ended without a verdict (its set-up or its verifier failed) makes the trial an error, with
   * that step's exception at the top level, whatever the strategy.
   */
  private concludeSteps(plan: TrialPlan, outcomes: StepOutcome[]): void {
    const { result } = this;
    const steps = outcomes.map((o) => o.result);
    const rewards = aggregateStepRewards(plan.strategy, steps);
    result.verifier_result = rewards ? { rewards } : null;
    const agents = steps.filter((s) => s.agent_execution !== null);
    const failed = steps.find((s) => s.exception_info && !s.verifier_result);
    this.notes.push(
      `${agents.length}/${plan.steps.length} steps run, ${plan.strategy}: ${steps
        .map((s) => `${s.step_name}=${s.verifier_result?.rewards.reward ?? 'null'}`)
        .join(', ')}`,
    );
    const reward = rewards?.reward;
    const berth = result.berth;
    if (this.spec.verification.disable && !failed) {
      // --disable-verification: the steps' agents ran, nothing was verified.
      berth.status = 'unresolved';
      berth.resolved = false;
      berth.note = [...this.notes, 'not verified (--disable-verification)'].join('; ');
      return;
    }
    berth.status = reward === undefined || failed ? 'error' : reward >= 1 ? 'resolved' : 'unresolved';
    berth.resolved = berth.status === 'resolved';
    berth.note = this.notes.join('; ') || 'ok';
  }
}

/**
 * The note of a one-step trial: why it is not resolved, how the patch applied, the verifier's
 * notes, an agent timeout and later exceptions, runner files the patch touched.
 */
function singleNote(
  notes: readonly string[],
  verdict: VerifierResult,
  berth: ExtendedTrialResult['berth'],
  exceptions: readonly ExceptionInfo[],
): string[] {
  const out = [...notes];
  if (verdict.reason) out.push(verdict.reason);
  const applyMethod = berth.patch_apply?.method;
  if (applyMethod && applyMethod !== 'git apply') out.push(`applied with ${applyMethod}`);
  out.push(...(verdict.notes ?? []));
  if (exceptions[0]?.exception_type === 'AgentTimeoutError') out.push('agent timed out');
  for (const e of exceptions)
    if (e.exception_type !== 'AgentTimeoutError' && e.exception_message !== verdict.reason)
      out.push(e.exception_type);
  // What the tamper checks saw (SWE-bench rows), carried into berth.tampering / rules.
  out.push(...recordTampering(berth, verdict.details ?? {}));
  return out;
}

/** Whether a step prepares anything before its agent (its `workdir/`, its healthcheck). */
function stepHasSetup(step: StepPlan): boolean {
  return Boolean(step.workdirDir) || Boolean(step.healthcheck);
}
