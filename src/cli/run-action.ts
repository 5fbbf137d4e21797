/**
 * The action of `berth run`, separate from its registration so start-up stays fast.
 * Everything that can be wrong with the input is checked before the first trial.
 */
import { basename, resolve } from 'node:path';
import { PredictionsAgent } from '../agents/predictions.ts';
import { createAgent } from '../agents/registry.ts';
import { createProviders } from '../environments/registry.ts';
import { InputError, UsageError } from '../errors.ts';
import { defaultJobName, runJob } from '../jobs/job.ts';
import { planTrials } from '../jobs/plan.ts';
import { buildRunReport } from '../reporters/json.ts';
import { type RunScope, textReporter } from '../reporters/text.ts';
import '../tasks/multilingual/register.ts';
import { loadTasks } from '../tasks/registry.ts';
import { localRunProblems } from '../tasks/swebench/runnable.ts';
import { createVerifiers } from '../verifiers/registry.ts';
import type { RunCommandOptions } from './commands/run.ts';
import { type InterruptHandle, installInterruptHandler, testPause } from './interrupt.ts';

/** Thrown at a check point when a signal arrived before the job started: nothing was written. */
class StoppedBeforeStart extends Error {}

function positiveInt(flag: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${flag} expects a positive whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function positiveNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0)) throw new UsageError(`${flag} expects a positive number, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * Runs the command; returns the process exit code (0, or 130 / 143 after SIGINT / SIGTERM).
 * Throws BerthError for bad usage or input (exit 2).
 * @param interrupt the command's signal handling, installed by the caller as early as possible
 *   (src/cli/commands/run.ts); when absent, one is installed here for the call.
 */
export async function runCommand(options: RunCommandOptions, interrupt?: InterruptHandle): Promise<number> {
  const handle = interrupt ?? installInterruptHandler();
  try {
    return await runInterruptible(options, handle);
  } catch (error) {
    if (!(error instanceof StoppedBeforeStart)) throw error;
    process.stderr.write('berth: stopped before any trial started; no job folder was written\n');
    return handle.exitCode() ?? 130;
  } finally {
    if (!interrupt) handle.dispose();
  }
}

async function runInterruptible(options: RunCommandOptions, interrupt: InterruptHandle): Promise<number> {
  const stopIfInterrupted = () => {
    if (interrupt.signal.aborted) throw new StoppedBeforeStart();
  };
  await testPause();
  stopIfInterrupted();
  const attempts = positiveInt('-k/--attempts', options.attempts, 1) as number;
  const concurrency = positiveInt('-n/--concurrency', options.concurrency, 1) as number;
  const limit = positiveInt('-l/--limit', options.limit);
  const multiplier = Number(options.timeoutMultiplier ?? '1');
  if (!(multiplier > 0))
    throw new UsageError(
      `--timeout-multiplier expects a positive number, got ${JSON.stringify(options.timeoutMultiplier)}`,
    );
  const phase = {
    agent: positiveNumber('--agent-timeout-multiplier', options.agentTimeoutMultiplier),
    verifier: positiveNumber('--verifier-timeout-multiplier', options.verifierTimeoutMultiplier),
    build: positiveNumber(
      '--environment-build-timeout-multiplier',
      options.environmentBuildTimeoutMultiplier,
    ),
  };
  const { dockerOptionsFrom } = await import('../environments/docker/options.ts');
  const dockerCli = dockerOptionsFrom(options.imageMap ?? [], options.config);
  const docker = {
    imageMap: dockerCli.imageMap,
    ...(dockerCli.pidsLimit !== undefined ? { pidsLimit: dockerCli.pidsLimit } : {}),
    ...(options.rebuild ? { rebuild: true } : {}),
    buildTimeoutMultiplier: phase.build ?? multiplier,
  };
  if (options.predictions && options.agent !== 'predictions') {
    throw new UsageError('--predictions is only used with -a predictions');
  }
  // Consent for ${SECRET} templates in Harbor env tables (src/tasks/harbor/env-template.ts).
  if (options.allowEnvSecrets) process.env.BERTH_ALLOW_ENV_SECRETS = '1';
  const jobName = options.jobName ?? defaultJobName();
  if (!/^[A-Za-z0-9._-]+$/.test(jobName) || jobName === '.' || jobName === '..') {
    throw new UsageError(
      `--job-name may hold only letters, digits, '.', '_' and '-'; got ${JSON.stringify(jobName)}`,
    );
  }

  // Input: dataset and agent, all checked before any trial.
  const { tasks } = await loadTasks(options.path);
  stopIfInterrupted();
  const taskWarnings = tasks.flatMap((task) =>
    ((task.metadata.harbor as { warnings?: string[] } | undefined)?.warnings ?? []).map(
      (warning) => `${task.origin.file}: ${warning}`,
    ),
  );
  for (const warning of taskWarnings.slice(0, 10)) process.stderr.write(`berth: warning: ${warning}\n`);
  if (taskWarnings.length > 10)
    process.stderr.write(
      `berth: warning: ... and ${taskWarnings.length - 10} more (berth check -p lists them)\n`,
    );
  const agent = await createAgent(options.agent, {
    ...(options.predictions ? { predictionsFile: options.predictions } : {}),
  });
  stopIfInterrupted();
  let candidates = tasks;
  const notes: string[] = [];
  if (agent instanceof PredictionsAgent) {
    const unknown = agent.unknownIds(tasks);
    if (unknown.length > 0) {
      const first = unknown[0] as { file: string; line: number; instanceId: string };
      throw new InputError(
        { file: first.file, line: first.line, field: 'instance_id' },
        `${unknown.length} prediction(s) name instances not in ${options.path}: ${unknown
          .slice(0, 5)
          .map((p) => p.instanceId)
          .join(', ')}`,
      );
    }
    candidates = tasks.filter((t) => agent.covers(t));
    if (candidates.length < tasks.length)
      notes.push(`${tasks.length - candidates.length} instance(s) have no prediction and are not run`);
  }
  if (options.agent === 'oracle') {
    const withoutGold = candidates.find((t) => t.solution.kind === 'none');
    if (withoutGold) {
      throw new InputError(
        {
          file: withoutGold.origin.file,
          ...(withoutGold.origin.line ? { line: withoutGold.origin.line } : {}),
          field: 'patch',
        },
        `${withoutGold.name} has no gold patch for the oracle`,
      );
    }
  }
  const planOptions = {
    attempts,
    ...(options.include ? { include: options.include } : {}),
    ...(options.exclude ? { exclude: options.exclude } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
  const plan = planTrials(candidates, planOptions);
  // SWE-bench's submitted_instances (those run) and, for -a predictions, the rows picked by
  // -i/-x that have no prediction; together they are the dataset (total_instances).
  const submittedInstances = new Set(plan.map((p) => p.task.name)).size;
  const { limit: _limit, ...selectOptions } = planOptions;
  const withoutPrediction =
    agent instanceof PredictionsAgent
      ? planTrials(
          tasks.filter((t) => !agent.covers(t)),
          { ...selectOptions, attempts: 1 },
        ).length
      : 0;
  const scope: RunScope = {
    datasetInstances: submittedInstances + withoutPrediction,
    submittedInstances,
    attempts,
    predictions: agent instanceof PredictionsAgent,
  };
  if (plan.length === 0) {
    const why =
      tasks.length === 0
        ? `${options.path} holds no task`
        : `none of the ${tasks.length} task(s) of ${options.path} is left to run (check -i/-x/-l${agent instanceof PredictionsAgent ? ' and the predictions file' : ''})`;
    throw new UsageError(`no task to run: ${why}`);
  }
  const providers = createProviders({
    ...(options.repos ? { reposDir: resolve(options.repos) } : {}),
    ...(options.keepEnvironments ? { keep: true } : {}),
    ...docker,
  });
  const verifiers = createVerifiers();
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const kind of new Set(plan.map((p) => p.task.environment.kind))) {
    if (!providers.some((p) => p.kind === kind))
      problems.push(`no environment provider for ${kind} tasks in this build of berth`);
  }
  for (const kind of new Set(plan.map((p) => p.task.verifier.kind))) {
    if (!verifiers.some((v) => v.kind === kind))
      problems.push(`no verifier for ${kind} tasks in this build of berth`);
  }
  for (const { task } of plan) {
    if (seen.has(task.name)) continue;
    seen.add(task.name);
    stopIfInterrupted();
    for (const problem of await localRunProblems(task, {
      ...(options.repos ? { reposDir: options.repos } : {}),
    })) {
      problems.push(
        `${task.origin.file}${task.origin.line ? `:line ${task.origin.line}` : ''} (field \`${problem.field}\`): ${task.name}: ${problem.message}`,
      );
    }
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 10).join('\n  ');
    const more = problems.length > 10 ? `\n  ... and ${problems.length - 10} more` : '';
    throw new UsageError(
      `${problems.length} problem(s) prevent the run; nothing was started (exclude tasks with -x GLOB):\n  ${shown}${more}`,
    );
  }

  // Run.
  const json = options.json === true;
  const human = (text: string) => (json ? process.stderr.write(text) : process.stdout.write(text));
  const mode = !json && process.stdout.isTTY && !process.env.CI ? 'tty' : 'lines';
  const reporter = textReporter({
    mode,
    attempts,
    write: human,
    total: plan.length,
    scope,
    ...(process.stderr.isTTY ? { progress: (text: string) => process.stderr.write(text) } : {}),
  });
  for (const note of notes) process.stderr.write(`berth: ${note}\n`);
  stopIfInterrupted();
  if (mode === 'tty')
    process.stderr.write(`berth: running ${plan.length} trial(s), ${concurrency} at a time...\n`);
  const summary = await runJob({
    jobsDir: resolve(options.jobsDir),
    jobName,
    source: basename(resolve(options.path)).replace(/\.(jsonl?|ndjson)$/i, ''),
    plan,
    agent,
    providers,
    verifiers,
    concurrency,
    timeoutMultiplier: multiplier,
    phaseMultipliers: {
      ...(phase.agent !== undefined ? { agent: phase.agent } : {}),
      ...(phase.verifier !== undefined ? { verifier: phase.verifier } : {}),
    },
    config: {
      dataset: resolve(options.path),
      agent_name: options.agent,
      ...(options.predictions ? { predictions: resolve(options.predictions) } : {}),
      attempts,
      include: options.include ?? [],
      exclude: options.exclude ?? [],
      limit: limit ?? null,
      repos: options.repos ? resolve(options.repos) : null,
    },
    identity: {
      dataset: resolve(options.path),
      agent: options.agent,
      predictions: options.predictions ? resolve(options.predictions) : null,
      attempts,
    },
    filters: {
      include: options.include ?? [],
      exclude: options.exclude ?? [],
      limit: limit ?? null,
    },
    signal: interrupt.signal,
    onTrialEnd: (result, info) => reporter.trialEnded(result, info.reused),
  });
  reporter.jobEnded(summary);
  if (json) {
    process.stdout.write(
      `${JSON.stringify(buildRunReport(summary, { dataset: options.path, agent: agent.info.name, scope }), null, 2)}\n`,
    );
  }
  human(`results: ${summary.job_dir}\n`);
  return interrupt.signal.aborted ? (interrupt.exitCode() ?? 130) : 0;
}
