/**
 * The extended Harbor trial: multi-step tasks (`[[steps]]`), separate verifier
 * environments, `[agent] user` / `[verifier] user`, healthchecks, artifacts,
 * templated `[verifier] env` / `[solution] env`, and Kotlin Benchmark grading by
 * berth. `runTrial` hands a Harbor task here when it uses any of these
 * (`needsExtendedTrial`); a single-step task runs as a one-step sequence.
 *
 * Order, as Harbor's `Trial.run` / `MultiStepTrial` (src/harbor/trial/):
 * environment start; `[environment.healthcheck]`; then per step: upload
 * `steps/<name>/workdir/` into the working directory and run its `setup.sh`
 * (as the agent user), the step healthcheck, the agent (as `[agent] user`, with
 * the step's instruction and `solution/`), collect artifacts, verify (shared:
 * tests uploaded over the shared ones, as `[verifier] user`; separate: a new
 * container built from `tests/` receiving the artifacts; after the last step
 * the agent container is stopped first), archive `agent/`, `verifier/` and
 * `artifacts/` to `steps/<name>/`, and stop when the step errored without a
 * verdict or missed its `min_reward`. The trial reward is the steps' `mean`
 * (per key, over steps with a verdict) or the `final` step's.
 *
 * Errors stay where they happened: each step result carries its own
 * `exception_info`; when the trial's reward is null the first step error is
 * also the trial's `exception_info`, so nothing is lost in a top-level null.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentResult } from '../agents/agent.ts';
import { applyPhaseNetwork } from '../environments/docker/egress/network-switch.ts';
import { runHealthcheck } from '../environments/docker/healthcheck.ts';
import type { Environment } from '../environments/environment.ts';
import { TrialModelUse } from '../models/trial-models.ts';
import { resolveEnvTemplates } from '../tasks/harbor/env-template.ts';
import {
  aggregateStepRewards,
  type HarborStepPlan,
  harborPlan,
  minRewardFailure,
} from '../tasks/harbor/steps.ts';
import type { Task } from '../tasks/task.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { shellQuote } from '../util/shell.ts';
import { withTimeout } from '../util/with-timeout.ts';
import { disagreementNote, verifyKotlinHarbor } from '../verifiers/kotlin-harbor.ts';
import type { Verifier, VerifierResult } from '../verifiers/verifier.ts';
import { collectArtifacts, uploadArtifacts } from './artifacts.ts';
import { agentResultForFile, roundSec } from './file-format.ts';
import { phaseLimitError, withLimitErrors } from './limit-errors.ts';
import type { ExceptionInfo, TimingInfo, TrialResult } from './result.ts';
import { collectLogFolder, resetLogFolder } from './staging.ts';
import { beginTrialResult, runAgentSetup, type TrialOptions } from './trial.ts';

/** Harbor's StepResult. */
export interface StepResult {
  step_name: string;
  agent_result: Record<string, unknown> | null;
  verifier_result: { rewards: Record<string, number> } | null;
  exception_info: ExceptionInfo | null;
  agent_execution: TimingInfo | null;
  verifier: TimingInfo | null;
  /** berth: verifier details (test exit code, Kotlin grade, ...), and why later steps did not run. */
  berth?: { verifier_details?: Record<string, unknown> | null; stopped_after?: string };
}

export type ExtendedTrialResult = TrialResult & { step_results?: StepResult[] };

class StepSetupError extends Error {
  override name = 'StepSetupError';
}
class AgentTimeoutError extends Error {
  override name = 'AgentTimeoutError';
}
class CancelledError extends Error {
  override name = 'CancelledError';
}

const now = () => new Date().toISOString();

function exceptionInfo(error: unknown, prefix = ''): ExceptionInfo {
  const e = error instanceof Error ? error : new Error(String(error));
  return {
    exception_type: e.name || 'Error',
    exception_message: `${prefix}${e.message}`,
    exception_traceback: e.stack ?? e.message,
    occurred_at: now(),
  };
}

function verdictException(v: { type: string; message: string }): ExceptionInfo {
  return {
    exception_type: v.type,
    exception_message: v.message,
    exception_traceback: v.message,
    occurred_at: now(),
  };
}

/** The environment seen through a default user: `exec` without `user` runs as `user` (Harbor's `with_default_user`). */
export function withDefaultUser(environment: Environment, user: string | number | undefined): Environment {
  if (user === undefined) return environment;
  return new Proxy(environment, {
    get(target, prop) {
      if (prop === 'defaultExecUser') return String(user);
      if (prop === 'exec')
        return (command: string, options: Parameters<Environment['exec']>[1] = {}) =>
          target.exec(command, { ...options, user: options.user ?? String(user) });
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Moves the children of `from` into `to` (replacing), leaving `from` empty (Harbor's `move_dir_contents`). */
async function moveContents(from: string, to: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(from);
  } catch {
    return;
  }
  if (names.length === 0) return;
  await mkdir(to, { recursive: true });
  for (const name of names) {
    await rm(join(to, name), { recursive: true, force: true });
    await rename(join(from, name), join(to, name));
  }
}

/** Copies several tests folders into one (later ones over earlier ones), as Harbor uploads them in turn to /tests. */
async function mergedTestsDir(dirs: string[]): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  if (dirs.length === 1 && dirs[0]) return { dir: dirs[0], cleanup: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'berth-tests-'));
  for (const d of dirs) await cp(d, dir, { recursive: true, force: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Runs a Harbor task with the extended features. Never throws for what happens inside the trial. */
export async function runExtendedHarborTrial(options: TrialOptions): Promise<ExtendedTrialResult> {
  const { task, agent, trialDir, signal } = options;
  const multiplier = options.timeoutMultiplier ?? 1;
  const agentMultiplier = options.phaseMultipliers?.agent ?? multiplier;
  const verifierMultiplier = options.phaseMultipliers?.verifier ?? multiplier;
  const started = performance.now();
  const result: ExtendedTrialResult = await beginTrialResult(options);
  const models = TrialModelUse.open(options.models, { ...options, agent: agent.info });
  const record = (error: unknown) => {
    if (!result.exception_info) result.exception_info = exceptionInfo(error);
  };
  const notes: string[] = [];
  let environment: Environment | undefined;
  let phase: TimingInfo | undefined;
  /** Whether a step copied the agent's log folder out (else the trial's end does, e.g. after a failed set-up). */
  let agentLogsCollected = false;
  const stopAgentEnvironment = async () => {
    if (!environment) return;
    const env = environment;
    environment = undefined;
    await env.stop();
  };
  try {
    const checkCancelled = () => {
      if (signal?.aborted) throw new CancelledError('cancelled');
    };
    const plan = harborPlan(task);
    const provider = options.providers.find((p) => p.kind === task.environment.kind);
    if (!provider) throw new Error(`no environment provider for kind ${task.environment.kind}`);
    const harborVerifier = options.verifiers.find((v) => v.kind === 'harbor');
    if (!harborVerifier) throw new Error('no harbor verifier');
    // Templates first: a missing variable or a secret without consent fails before anything starts.
    const solutionEnv = resolveEnvTemplates(plan.solutionEnv, { section: '[solution] env' });
    const verifierEnvs = plan.steps.map((s) =>
      resolveEnvTemplates(s.verifierEnv, {
        section: `${s.name ? `[steps.${s.name}.verifier]` : '[verifier]'} env`,
      }),
    );

    checkCancelled();
    phase = { started_at: now(), finished_at: '' };
    result.environment_setup = phase;
    environment = await provider.start({
      task,
      jobId: options.jobId,
      trialDir,
      ...(agent.tool ? { tool: agent.tool } : {}),
      ...(models ? { modelGatewayDir: models.session.gatewayDir } : {}),
      ...(signal ? { signal } : {}),
    });
    result.berth.isolated = environment.isolated;
    result.berth.isolation_method = environment.isolated ? environment.kind : null;
    if (environment.limits) result.berth.limits = environment.limits.record;
    if (plan.healthcheck) {
      const tries = await runHealthcheck(environment, plan.healthcheck, signal ? { signal } : {});
      notes.push(`healthcheck passed after ${tries} tr${tries === 1 ? 'y' : 'ies'}`);
    }
    phase.finished_at = now();
    // Agent setup (Harbor's installed agents), once per trial before the first step.
    const setupIn = environment;
    await withLimitErrors('agent-setup', setupIn, () =>
      runAgentSetup(
        agent,
        {
          task,
          environment: setupIn,
          attempt: options.attempt,
          logDir: join(trialDir, 'agent'),
          timeoutMultiplier: agentMultiplier,
          ...(models ? { models: models.session } : {}),
          ...(signal ? { signal } : {}),
        },
        result,
      ),
    );

    const steps: StepResult[] = [];
    if (plan.multiStep) result.step_results = steps;
    for (const [index, step] of plan.steps.entries()) {
      checkCancelled();
      const isLast = index === plan.steps.length - 1;
      const target: StepResult = {
        step_name: step.name ?? task.name,
        agent_result: null,
        verifier_result: null,
        exception_info: null,
        agent_execution: null,
        verifier: null,
      };
      if (plan.multiStep) steps.push(target);
      const stepPrefix = step.name ? `step ${step.name}: ` : '';
      const env = environment;
      if (!env) throw new Error('the agent environment is gone');
      const agentEnv = withDefaultUser(env, step.agentUser);
      // The step's own phase networks ([steps.agent] / [steps.verifier] network_mode) override the task's.
      const netTask: Task = step.phaseNetwork
        ? { ...task, phaseNetwork: { ...(task.phaseNetwork ?? {}), ...step.phaseNetwork } }
        : task;

      // Step preparation: workdir upload, setup.sh, healthcheck.
      try {
        if (step.workdirDir) {
          // The upload's tar entry for the folder itself would reset its owner and mode to the host's:
          // keep the folder as the image made it, and give the uploaded files to the folder's owner.
          const wd = shellQuote(env.workdir);
          const before = await env.exec(`stat -c '%u:%g %a' ${wd}`, {
            user: 'root',
            cwd: '/',
            timeoutSec: 30,
          });
          await env.upload(step.workdirDir, env.workdir);
          const [owner, mode] = before.output.trim().split(' ');
          if (before.exitCode === 0 && owner && mode) {
            const names = (await readdir(step.workdirDir)).map((n) =>
              shellQuote(`${env.workdir.replace(/\/+$/, '')}/${n}`),
            );
            await env.exec(
              `chown ${owner} ${wd} && chmod ${mode} ${wd} && chown -R ${owner} ${names.join(' ')}`,
              {
                user: 'root',
                cwd: '/',
                timeoutSec: 60,
              },
            );
          }
          if (existsSync(join(step.workdirDir, 'setup.sh'))) {
            const setup = await agentEnv.exec(
              `bash ${shellQuote(`${env.workdir.replace(/\/+$/, '')}/setup.sh`)}`,
              {
                timeoutSec: 600,
                outputFile: join(trialDir, 'agent', 'setup.log'),
                ...(signal ? { signal } : {}),
              },
            );
            if (setup.exitCode !== 0)
              throw new StepSetupError(
                `setup.sh exited with code ${setup.exitCode}: ${setup.output.trim().split('\n').slice(-3).join(' | ')}`,
              );
          }
        }
        if (step.healthcheck) await runHealthcheck(agentEnv, step.healthcheck, signal ? { signal } : {});
      } catch (error) {
        target.exception_info = exceptionInfo(error, stepPrefix);
      }

      // Agent.
      let agentResult: AgentResult | undefined;
      if (!target.exception_info) {
        const timing: TimingInfo = { started_at: now(), finished_at: '' };
        target.agent_execution = timing;
        result.agent_execution ??= timing;
        await applyPhaseNetwork(env, netTask, 'agent');
        const stepTask: Task = {
          ...task,
          instruction: step.instruction,
          solution: step.solutionDir
            ? { kind: 'script', dir: step.solutionDir, env: solutionEnv }
            : { kind: 'none' },
        };
        const timeoutSec =
          step.agentTimeoutSec !== undefined ? step.agentTimeoutSec * agentMultiplier : undefined;
        try {
          agentResult = await withTimeout(
            agent.run({
              task: stepTask,
              environment: agentEnv,
              attempt: options.attempt,
              logDir: join(trialDir, 'agent'),
              ...(timeoutSec !== undefined ? { timeoutSec } : {}),
              ...(models ? { models: models.session } : {}),
              ...(signal ? { signal } : {}),
            }),
            timeoutSec,
            () => new AgentTimeoutError(`the agent did not finish within ${timeoutSec} s`),
          );
          const { patch: _patch, ...rest } = agentResult;
          target.agent_result = agentResultForFile(rest);
          const limit = await phaseLimitError('agent', agentEnv);
          if (limit) target.exception_info = exceptionInfo(limit, stepPrefix);
        } catch (error) {
          // Recorded; the verifier still runs (Harbor records agent errors and verifies).
          // A resource limit hit by the agent is its error (AgentOutOfMemoryError, ...).
          target.exception_info = exceptionInfo(
            (await phaseLimitError('agent', agentEnv)) ?? error,
            stepPrefix,
          );
        }
        timing.finished_at = now();
        if (result.agent_execution !== timing) result.agent_execution.finished_at = timing.finished_at;
        checkCancelled();
      }
      // The agent's log folder (and its set-up's), copied out as data.
      agentLogsCollected = true;
      await collectLogFolder(env, 'agent', trialDir, result);

      // Artifacts.
      const artifactsDir = join(trialDir, 'artifacts');
      await collectArtifacts(env, artifactsDir, step.artifacts);

      // Verifier (Harbor verifies even after an agent error; a failed setup skips it).
      if (!(target.exception_info && !target.agent_execution)) {
        const timing: TimingInfo = { started_at: now(), finished_at: '' };
        target.verifier = timing;
        result.verifier ??= timing;
        let verdict: VerifierResult;
        const verifierEnv = verifierEnvs[index] ?? {};
        const timeoutSec = step.verifierTimeoutSec * verifierMultiplier;
        if (step.verifierMode === 'separate') {
          if (isLast) await stopAgentEnvironment();
          verdict = await runSeparateVerifier({
            options,
            step,
            key: step.name ?? 'verifier',
            artifactsDir,
            verifier: harborVerifier,
            env: verifierEnv,
            timeoutSec,
            agentResult: agentResult ?? {},
          });
        } else {
          await applyPhaseNetwork(env, netTask, 'verifier');
          const merged = await mergedTestsDir(step.testsDirs);
          try {
            const vTask: Task = {
              ...task,
              verifier: {
                kind: 'harbor',
                testsDir: merged.dir,
                timeoutSec,
                env: verifierEnv,
                ...(step.verifierUser !== undefined ? { user: step.verifierUser } : {}),
              },
            };
            const context = {
              task: vTask,
              environment: env,
              agentResult: agentResult ?? {},
              trialDir,
              timeoutSec,
              ...(signal ? { signal } : {}),
            };
            verdict = await withLimitErrors('verifier', env, () =>
              step.kotlinExpected
                ? verifyKotlinHarbor(harborVerifier, context, step.kotlinExpected)
                : harborVerifier.verify(context),
            );
          } finally {
            await merged.cleanup();
          }
        }
        timing.finished_at = now();
        if (result.verifier !== timing) result.verifier.finished_at = timing.finished_at;
        if (verdict.exception) {
          // Harbor: a verifier error leaves this step without a verdict.
          if (!target.exception_info)
            target.exception_info = verdictException({
              ...verdict.exception,
              message: `${stepPrefix}${verdict.exception.message}`,
            });
        } else target.verifier_result = { rewards: verdict.rewards };
        target.berth = { verifier_details: verdict.details ?? null };
      }

      if (plan.multiStep) {
        const stepDir = join(trialDir, 'steps', target.step_name);
        for (const d of ['agent', 'verifier', 'artifacts'])
          await moveContents(join(trialDir, d), join(stepDir, d));
        // The next step starts with empty log folders in the environment too (Harbor moves the mounted ones).
        if (environment && !isLast) {
          await resetLogFolder(environment, 'agent');
          await resetLogFolder(environment, 'artifacts');
        }
        await writeJsonAtomic(join(stepDir, 'result.json'), target);
      } else {
        result.agent_result = target.agent_result;
        result.verifier_result = target.verifier_result;
        result.berth.verifier_details = target.berth?.verifier_details ?? null;
        if (target.exception_info) result.exception_info = target.exception_info;
      }
      if (target.exception_info) notes.push(`${stepPrefix}${target.exception_info.exception_type}`);
      const disagreement = disagreementNote(target.berth?.verifier_details);
      if (disagreement) notes.push(`${stepPrefix}${disagreement}`);

      // Gating.
      if (plan.multiStep && !isLast) {
        let stop: string | undefined;
        if (target.exception_info && !target.verifier_result) stop = 'failed';
        else if (step.minReward !== undefined)
          stop = minRewardFailure(target.verifier_result?.rewards, step.minReward);
        if (stop) {
          target.berth = { ...(target.berth ?? {}), stopped_after: stop };
          notes.push(`stopped after step ${target.step_name}: ${stop}`);
          break;
        }
      }
    }
    if (plan.multiStep) {
      const rewards = aggregateStepRewards(plan.strategy, steps);
      result.verifier_result = rewards ? { rewards } : null;
      if (!rewards) {
        const first = steps.find((s) => s.exception_info)?.exception_info;
        if (first) result.exception_info = first;
      }
      notes.push(
        `${steps.length}/${plan.steps.length} steps run, ${plan.strategy}: ${steps
          .map((s) => `${s.step_name}=${s.verifier_result?.rewards.reward ?? 'null'}`)
          .join(', ')}`,
      );
    }
    const reward = result.verifier_result?.rewards?.reward;
    result.berth.status =
      reward === undefined ? 'error' : reward >= 1 && !result.exception_info ? 'resolved' : 'unresolved';
    result.berth.resolved = result.berth.status === 'resolved';
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
      result.berth.note = [
        ...notes,
        `${result.exception_info?.exception_type}: ${result.exception_info?.exception_message.split('\n')[0]}`,
      ].join('; ');
    }
    result.berth.resolved = false;
  } finally {
    if (environment && !agentLogsCollected) await collectLogFolder(environment, 'agent', trialDir, result);
    try {
      await stopAgentEnvironment();
    } catch (error) {
      record(error);
    }
    await rm(join(trialDir, '.verifier-env'), { recursive: true, force: true }).catch(() => {});
    await models?.finish(result).catch(record);
    result.finished_at = now();
    result.berth.duration_sec = roundSec((performance.now() - started) / 1000);
    await writeJsonAtomic(join(trialDir, 'result.json'), result);
  }
  return result;
}

/**
 * A separate verifier (Harbor's `_run_separate_verifier`): a new container
 * built from the step's `tests/` (or the task's), with its own network
 * baseline and limits, `/logs/verifier` of its own, the artifacts copied in,
 * and `/tests` as the image has it (tests are not uploaded). Its
 * `verifier/` output is moved into the trial's `verifier/`.
 */
async function runSeparateVerifier(args: {
  options: TrialOptions;
  step: HarborStepPlan;
  key: string;
  artifactsDir: string;
  verifier: Verifier;
  env: Record<string, string>;
  timeoutSec: number;
  agentResult: AgentResult;
}): Promise<VerifierResult> {
  const { options, step } = args;
  const { task, signal } = options;
  const spec = step.verifierEnvironment;
  if (!spec) throw new Error(`step ${args.key}: separate verifier without an environment`);
  const provider = options.providers.find((p) => p.kind === 'docker');
  if (!provider) throw new Error('a separate verifier environment needs the docker provider');
  const safe = args.key.replace(/[^A-Za-z0-9._-]/g, '_');
  const baseEnv = task.environment as Record<string, unknown>;
  const hasDockerfile = existsSync(join(spec.contextDir, 'Dockerfile'));
  const vTask: Task = {
    ...task,
    name: `${task.name}__verifier__${safe}`,
    environment: {
      kind: 'docker',
      ...(spec.dockerImage && !hasDockerfile ? { image: spec.dockerImage } : {}),
      ...(hasDockerfile ? { dockerfileDir: spec.contextDir } : {}),
      contextDir: spec.contextDir,
      ...(spec.workdir ? { workdir: spec.workdir } : {}),
      ...(spec.cpus !== undefined ? { cpus: spec.cpus } : {}),
      ...(spec.memoryMb !== undefined ? { memoryMb: spec.memoryMb } : {}),
      ...(spec.buildTimeoutSec !== undefined ? { buildTimeoutSec: spec.buildTimeoutSec } : {}),
      network: spec.network,
      ...(baseEnv.basesDir ? { basesDir: baseEnv.basesDir } : {}),
      imageName: `${String(baseEnv.imageName ?? `hb__${task.name}`)}__verifier__${safe.toLowerCase()}`,
    },
    phaseNetwork: {},
  };
  const subDir = join(options.trialDir, '.verifier-env', safe);
  await rm(subDir, { recursive: true, force: true });
  const venv = await provider.start({
    task: vTask,
    jobId: options.jobId,
    trialDir: subDir,
    ...(signal ? { signal } : {}),
  });
  let verdict: VerifierResult;
  try {
    await uploadArtifacts(venv, args.artifactsDir, step.artifacts);
    const context = {
      task: {
        ...vTask,
        verifier: {
          kind: 'harbor' as const,
          testsDir: spec.contextDir,
          testsInImage: true,
          timeoutSec: args.timeoutSec,
          env: args.env,
          ...(step.verifierUser !== undefined ? { user: step.verifierUser } : {}),
        },
      },
      environment: venv,
      agentResult: args.agentResult,
      trialDir: subDir,
      timeoutSec: args.timeoutSec,
      ...(signal ? { signal } : {}),
    };
    verdict = step.kotlinExpected
      ? await verifyKotlinHarbor(args.verifier, context, step.kotlinExpected)
      : await args.verifier.verify(context);
  } finally {
    await venv.stop();
  }
  await moveContents(join(subDir, 'verifier'), join(options.trialDir, 'verifier'));
  await rm(subDir, { recursive: true, force: true });
  return { ...verdict, details: { ...(verdict.details ?? {}), verifier_environment: 'separate' } };
}
