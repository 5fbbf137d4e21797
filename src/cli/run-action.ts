/**
 * The action of `berth run`, separate from its registration so start-up stays fast.
 * Everything that can be wrong with the input is checked before the first trial.
 */
import { basename, resolve } from 'node:path';
import { describeEnv } from '../agents/command.ts';
import { isInstalledAgentName } from '../agents/installed/packages.ts';
import { PredictionsAgent } from '../agents/predictions.ts';
import { type AgentOptions, createAgent, TERMINUS_NAMES } from '../agents/registry.ts';
import { describeIssue, InputError, UsageError } from '../errors.ts';
import { runJob } from '../jobs/job.ts';
import { defaultJobName } from '../jobs/names.ts';
import { planPerModel, planTrials } from '../jobs/plan.ts';
import { modelEndpointFor } from '../models/access.ts';
import type { TrialLimits as ModelTrialLimits } from '../models/gateway.ts';
import { combineReporters, createReporters, ownsStdout } from '../reporters/registry.ts';
import type { ReporterContext, RunScope } from '../reporters/reporter.ts';
import { buildSwebenchReport, writeSwebenchReport } from '../reporters/swebench-report.ts';
import { type LimitRequest, MiB } from '../sandbox/limits.ts';
import '../tasks/multilingual/register.ts';
import { loadTasks, placeTasks } from '../tasks/registry.ts';
import { instanceImageProblem } from '../tasks/swebench/instance-image.ts';
import { localRunProblems } from '../tasks/swebench/runnable.ts';
import type { Task } from '../tasks/task.ts';
import { DEFAULT_INSTALL_TIMEOUT_SEC } from '../trials/engine.ts';
import { eventText } from '../trials/event-log.ts';
import { jobEndEventOf, trialEndEventOf, trialStartEventOf } from '../trials/events.ts';
import { providersFor } from '../trials/runtime.ts';
import type { EnvironmentOptions, TrialLimits } from '../trials/spec.ts';
import { MAX_TIMER_SEC } from '../util/with-timeout.ts';
import { createVerifiers } from '../verifiers/registry.ts';
import type { RunCommandOptions } from './commands/run.ts';
import { type HarborRunSettings, harborRunOptions, parseAssignments } from './harbor-flags.ts';
import { type InterruptHandle, installInterruptHandler, testPause } from './interrupt.ts';
import { resolveRunModels, startRunGateway } from './run-models.ts';

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
  if (!(n > 0) || !Number.isFinite(n))
    throw new UsageError(`${flag} expects a positive number, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * The resource limits asked for on the command line (Harbor's `--override-cpus`,
 * `--override-memory-mb`, `--override-storage-mb`) and in the config file (`docker.pids_limit`).
 * @throws UsageError for a value that is not a positive number
 */
export function limitRequestFrom(
  options: Pick<RunCommandOptions, 'overrideCpus' | 'overrideMemoryMb' | 'overrideStorageMb'>,
  pidsLimit?: number,
): LimitRequest {
  const cpus = positiveNumber('--override-cpus', options.overrideCpus);
  const memoryMb = positiveNumber('--override-memory-mb', options.overrideMemoryMb);
  const storageMb = positiveNumber('--override-storage-mb', options.overrideStorageMb);
  return {
    ...(cpus !== undefined ? { cpus } : {}),
    ...(memoryMb !== undefined ? { memoryBytes: Math.round(memoryMb * MiB) } : {}),
    ...(storageMb !== undefined ? { writableBytes: Math.round(storageMb * MiB) } : {}),
    ...(pidsLimit !== undefined ? { processes: pidsLimit } : {}),
  };
}

/**
 * The `command` agent's options from the command line (src/agents/command.ts).
 * `--agent-env NAME` (no `=`) copies NAME's value from berth's own environment.
 * @throws UsageError for a malformed or missing variable, or these options without `-a command`.
 */
function commandAgentOptions(options: RunCommandOptions): AgentOptions {
  const installed = isInstalledAgentName(options.agent) || options.agent === 'qwen-coder';
  // berth's own agent (and Harbor's Terminus names, which run it) takes --ak too.
  const deckhand = options.agent === 'deckhand' || TERMINUS_NAMES.includes(options.agent);
  const given = ['agentCommand', 'agentSetup', 'agentSetupTimeout', 'agentEnv', 'agentMount'] as const;
  const flagName = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (!installed) {
    const used = (deckhand ? (['agentVersion'] as const) : (['agentVersion', 'ak'] as const)).filter(
      (k) => options[k] !== undefined,
    );
    if (used.length > 0)
      throw new UsageError(
        `${used.map(flagName).join(', ')} only apply to installed agents (claude-code, codex, gemini-cli, opencode, qwen-code)`,
      );
  }
  if (options.agent !== 'command' && !installed) {
    const used = [...given, 'ae' as const].filter((k) => options[k] !== undefined);
    if (used.length > 0) throw new UsageError(`${used.map(flagName).join(', ')} only apply to -a command`);
    if (!deckhand) return {};
  }
  if (installed) {
    const used = (['agentCommand', 'agentSetup', 'agentSetupTimeout', 'agentMount'] as const).filter(
      (k) => options[k] !== undefined,
    );
    if (used.length > 0) throw new UsageError(`${used.map(flagName).join(', ')} only apply to -a command`);
  }
  const env = parseAssignments('--agent-env', [...(options.agentEnv ?? []), ...(options.ae ?? [])], true);
  const setupTimeout = positiveNumber('--agent-setup-timeout', options.agentSetupTimeout);
  const kwargs: Record<string, string> = {};
  for (const item of options.ak ?? []) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--ak expects key=value, got ${JSON.stringify(item)}`);
    kwargs[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return {
    ...(options.agentVersion !== undefined ? { agentVersion: options.agentVersion } : {}),
    ...(Object.keys(kwargs).length > 0 ? { agentKwargs: kwargs } : {}),
    ...(options.agentCommand !== undefined ? { agentCommand: options.agentCommand } : {}),
    ...(options.agentSetup !== undefined ? { agentSetup: options.agentSetup } : {}),
    ...(setupTimeout !== undefined ? { agentSetupTimeoutSec: setupTimeout } : {}),
    ...(Object.keys(env).length > 0 ? { agentEnv: env } : {}),
    ...(options.agentMount?.length ? { agentMounts: options.agentMount.map((dir) => resolve(dir)) } : {}),
    ...(options.model?.[0] !== undefined ? { model: options.model[0] } : {}),
  };
}

/** What config.json records of the command agent; secret-looking variables by name only. */
function commandAgentRecord(agent: AgentOptions, agentTimeout: number | undefined): Record<string, unknown> {
  return {
    ...(agent.agentCommand !== undefined ? { agent_command: agent.agentCommand } : {}),
    ...(agent.agentSetup !== undefined ? { agent_setup: agent.agentSetup } : {}),
    ...(agent.agentEnv ? { agent_env: describeEnv(agent.agentEnv) } : {}),
    ...(agent.agentMounts ? { agent_mounts: agent.agentMounts } : {}),
    ...(agent.agentVersion !== undefined ? { agent_version: agent.agentVersion } : {}),
    ...(agent.agentKwargs ? { agent_kwargs: agent.agentKwargs } : {}),
    ...(agent.model !== undefined ? { model: agent.model } : {}),
    ...(agentTimeout !== undefined ? { agent_timeout_sec: agentTimeout } : {}),
  };
}

/**
 * Refuses multipliers that make a phase timeout longer than a Node timer holds (MAX_TIMER_SEC, about
 * 24.8 days): such a timer would fire at once. Names the option, the phase and the task.
 */
function refuseOverlongTimeouts(
  tasks: readonly Task[],
  multiplier: number,
  phase: { agent: number | undefined; verifier: number | undefined; build: number | undefined },
  multiplierText: string,
): void {
  const flag = (own: number | undefined, name: string) =>
    own !== undefined ? `--${name}-timeout-multiplier` : `--timeout-multiplier ${multiplierText}`;
  const check = (seconds: number, own: number | undefined, name: string, what: string) => {
    const total = seconds * (own ?? multiplier);
    if (total > MAX_TIMER_SEC)
      throw new UsageError(
        `${flag(own, name)}: ${what} would be ${Math.round(total)} s; a timeout can be at most ${MAX_TIMER_SEC} s`,
      );
  };
  check(DEFAULT_INSTALL_TIMEOUT_SEC, undefined, 'agent', 'the agent install timeout');
  for (const task of tasks) {
    if (task.agentTimeoutSec !== undefined)
      check(task.agentTimeoutSec, phase.agent, 'agent', `the agent timeout of ${task.name}`);
    const verifierSec = 'timeoutSec' in task.verifier ? task.verifier.timeoutSec : 1800;
    check(verifierSec, phase.verifier, 'verifier', `the verifier timeout of ${task.name}`);
    const buildSec = task.environment.kind === 'docker' ? task.environment.buildTimeoutSec : undefined;
    if (buildSec !== undefined)
      check(buildSec, phase.build, 'environment-build', `the build timeout of ${task.name}`);
  }
}

/**
 * Runs the command; returns the process exit code (0, or 130 / 143 after SIGINT / SIGTERM).
 * Throws BerthError for bad usage or input (exit 2).
 * @param interrupt the command's signal handling, installed by the caller as early as possible
 *   (src/cli/commands/run.ts); when absent, one is installed here for the call.
 */
export async function runCommand(
  options: RunCommandOptions,
  interrupt?: InterruptHandle,
  given?: ReadonlySet<string>,
): Promise<number> {
  const handle = interrupt ?? installInterruptHandler();
  try {
    // Harbor's spellings and its -c job configuration, folded into berth's options.
    const harbor = await harborRunOptions(
      options,
      new Set(
        given ?? Object.keys(options).filter((k) => options[k as keyof RunCommandOptions] !== undefined),
      ),
    );
    return await runInterruptible(
      harbor.options as RunCommandOptions & { path: string },
      harbor.settings,
      handle,
    );
  } catch (error) {
    if (!(error instanceof StoppedBeforeStart)) throw error;
    process.stderr.write('berth: stopped before any trial started; no job folder was written\n');
    return handle.exitCode() ?? 130;
  } finally {
    if (!interrupt) handle.dispose();
  }
}

async function runInterruptible(
  options: RunCommandOptions,
  harbor: HarborRunSettings,
  interrupt: InterruptHandle,
): Promise<number> {
  const stopIfInterrupted = () => {
    if (interrupt.signal.aborted) throw new StoppedBeforeStart();
  };
  await testPause();
  stopIfInterrupted();
  // Harbor's registries (-d/-t): the dataset becomes a folder of fetched tasks (offline).
  if (options.dataset || options.task || options.registryPath || options.registryUrl) {
    if (options.path) throw new UsageError('-p and -d/-t are alternatives: give one');
    const { registryDatasetPath } = await import('../tasks/harbor/registry-dataset.ts');
    options.path = (await registryDatasetPath(options, (line) =>
      process.stderr.write(`berth: ${line}\n`),
    )) as string;
  } else if (!options.path)
    throw new UsageError(
      "berth run needs a dataset: -p PATH, or -d NAME@VERSION with --registry-path FILE (Harbor's registry)",
    );
  const attempts = positiveInt('-k/--attempts', options.attempts, 1) as number;
  const concurrency = positiveInt('-n/--concurrency', options.concurrency, 1) as number;
  const limit = positiveInt('-l/--limit', options.limit);
  const multiplier = Number(options.timeoutMultiplier ?? '1');
  if (!(multiplier > 0) || !Number.isFinite(multiplier))
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
    agentSetup: positiveNumber('--agent-setup-timeout-multiplier', options.agentSetupTimeoutMultiplier),
  };
  const { dockerOptionsFrom } = await import('../environments/docker/options.ts');
  const dockerCli = dockerOptionsFrom(options.imageMap ?? [], options.settings);
  // What every trial's spec carries of the environments (src/trials/spec.ts), as data.
  const environmentOptions: EnvironmentOptions = {
    ...(options.repos ? { reposDir: resolve(options.repos) } : {}),
    // Harbor's --no-delete keeps what a trial's environment leaves (berth's local folders).
    ...(options.keepEnvironments || options.delete === false ? { keep: true } : {}),
    imageMap: Object.fromEntries(dockerCli.imageMap.entries()),
    ...(options.forceBuild ? { rebuild: true } : {}),
    ...(options.imagesDir ? { imagesDir: resolve(options.imagesDir) } : {}),
  };
  const limits: TrialLimits = limitRequestFrom(options, dockerCli.pidsLimit);
  if (options.predictions && options.agent !== 'predictions') {
    throw new UsageError('--predictions is only used with -a predictions');
  }
  const commandAgent = commandAgentOptions(options);
  const agentTimeout = positiveNumber('--agent-timeout', options.agentTimeout);
  // Consent for ${SECRET} templates in Harbor env tables (src/tasks/harbor/env-template.ts).
  if (options.allowEnvSecrets) process.env.BERTH_ALLOW_ENV_SECRETS = '1';
  const jobName = options.jobName ?? defaultJobName();
  if (!/^[A-Za-z0-9._-]+$/.test(jobName) || jobName === '.' || jobName === '..') {
    throw new UsageError(
      `--job-name may hold only letters, digits, '.', '_' and '-'; got ${JSON.stringify(jobName)}`,
    );
  }

  // Input: dataset and agent, all checked before any trial.
  const { tasks: loaded, skipped } = await loadTasks(options.path);
  // Invalid tasks of a dataset are listed and not run; the others run (exit 2 at the end).
  if (skipped.length > 0) {
    const listing = InputError.all(skipped.flatMap((s) => s.issues)).message;
    process.stderr.write(
      `berth: ${skipped.length} invalid task(s) skipped, not run (the others run):\n  ${listing.split('\n').join('\n  ')}\n`,
    );
  }
  // --env: SWE-bench rows in the harness's instance image, or from a snapshot / --repos mirror.
  // (-e is docker or local here: harborRunOptions refused anything else.)
  const placed = options.env ? placeTasks(loaded, options.env as 'docker' | 'local') : loaded;
  if (options.delete === false && placed.some((t) => t.environment.kind === 'docker'))
    process.stderr.write(
      'berth: --no-delete: Docker containers are still removed after each trial (built images are kept as a cache either way; berth clean --cache removes them)\n',
    );
  // --agent-timeout replaces the task's agent timeout (Harbor's `override_timeout_sec`).
  const tasks =
    agentTimeout === undefined ? placed : placed.map((t) => ({ ...t, agentTimeoutSec: agentTimeout }));
  stopIfInterrupted();
  const taskWarnings = tasks.flatMap((task) =>
    ((task.metadata.harbor as { warnings?: string[] } | undefined)?.warnings ?? []).map(
      // Each warning names its file and line already (src/errors.ts describeIssue).
      (warning) => warning,
    ),
  );
  for (const warning of taskWarnings.slice(0, 10)) process.stderr.write(`berth: warning: ${warning}\n`);
  if (taskWarnings.length > 10)
    process.stderr.write(
      `berth: warning: ... and ${taskWarnings.length - 10} more (berth check -p lists them)\n`,
    );
  // Models (-m): resolved and their keys checked before anything starts.
  // Harbor's own command lines pass --model with the oracle (the multilingual demo's README):
  // it is ignored there, and here, with a warning.
  const noModel = ['oracle', 'nop', 'predictions'].includes(options.agent);
  if (options.model?.length && noModel)
    process.stderr.write(
      `berth: warning: -m/--model is ignored: agent \`${options.agent}\` calls no model (-m is for deckhand, the installed agents and -a command)\n`,
    );
  const models = resolveRunModels(
    noModel ? { ...options, model: undefined } : options,
    options.agent,
    options.queue !== undefined,
  );
  const agentsPerModel = models
    ? await Promise.all(
        models.targets.map(async (target) => ({
          target,
          agent: await createAgent(options.agent, {
            ...commandAgent,
            model: target.id,
            modelTarget: target,
            modelEndpoint: modelEndpointFor,
          }),
        })),
      )
    : [];
  // What each trial's spec records of the agent (plain data; a trial's model is added per trial).
  const agentOptions: AgentOptions = {
    ...(options.predictions ? { predictionsFile: resolve(options.predictions) } : {}),
    ...commandAgent,
  };
  const agent = agentsPerModel[0]?.agent ?? (await createAgent(options.agent, agentOptions));
  if (agent.info.name !== options.agent && TERMINUS_NAMES.includes(options.agent))
    process.stderr.write(
      `berth: -a ${options.agent} runs berth's own coding agent, ${agent.info.name}: Harbor's Terminus-2 is not part of berth (docs/models.md)\n`,
    );
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
  if (options.rules === 'harbor' && !tasks.some((t) => t.verifier.kind === 'harbor'))
    throw new UsageError(
      `--rules harbor applies to Harbor tasks (verified in the agent's environment as Harbor does); ${options.path} has none`,
    );
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
  let plan = planTrials(candidates, planOptions);
  // SWE-bench's submitted_instances (those run) and, for -a predictions, the rows picked by
  // -i/-x that have no prediction; together they are the dataset (total_instances).
  const submittedInstances = new Set(plan.map((p) => p.task.name)).size;
  const { limit: _limit, ...selectOptions } = planOptions;
  const withoutPrediction =
    agent instanceof PredictionsAgent
      ? planTrials(
          tasks.filter((t) => !agent.covers(t)),
          { ...selectOptions, attempts: 1 },
        ).map((p) => p.task.name)
      : [];
  const scope: RunScope = {
    datasetInstances: submittedInstances + withoutPrediction.length,
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
  // --ve reaches a Harbor task's tests/test.sh; other verifiers run no script of the task's.
  const notHarbor = plan.find((p) => p.task.verifier.kind !== 'harbor');
  if (Object.keys(harbor.verifierEnv).length > 0 && notHarbor)
    throw new UsageError(
      `--ve/--verifier-env: ${notHarbor.task.name} is a ${notHarbor.task.format} task; verifier variables reach Harbor tasks' tests/test.sh only`,
    );
  refuseOverlongTimeouts(
    plan.map((p) => p.task),
    multiplier,
    phase,
    options.timeoutMultiplier ?? '1',
  );
  const providers = providersFor({
    environment: environmentOptions,
    limits,
    timeouts: {
      multiplier,
      ...(phase.build !== undefined ? { environmentBuildMultiplier: phase.build } : {}),
    },
    concurrency,
  });
  const verifiers = createVerifiers(options.rules === 'swebench' ? { rules: options.rules } : {});
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
  const imageExists = await engineImageLookup(plan.map((p) => p.task));
  const imageChosen = new Map<string, Task>();
  for (const { task } of plan) {
    if (seen.has(task.name)) continue;
    seen.add(task.name);
    stopIfInterrupted();
    // SWE-bench's instance image: mapped, on the engine, or under a local harness build's name.
    const image = await instanceImageProblem(task, dockerCli.imageMap, imageExists);
    if (image.task !== task) imageChosen.set(task.name, image.task);
    if (image.problem)
      problems.push(
        describeIssue({
          file: task.origin.file,
          ...(task.origin.line ? { line: task.origin.line } : {}),
          field: image.problem.field,
          message: `${task.name}: ${image.problem.message}`,
        }),
      );
    for (const problem of await localRunProblems(task, {
      ...(options.repos ? { reposDir: options.repos } : {}),
    })) {
      problems.push(
        describeIssue({
          file: task.origin.file,
          ...(task.origin.line ? { line: task.origin.line } : {}),
          field: problem.field,
          message: `${task.name}: ${problem.message}`,
        }),
      );
    }
  }
  if (imageChosen.size > 0) plan = plan.map((p) => ({ ...p, task: imageChosen.get(p.task.name) ?? p.task }));
  plan = planPerModel(plan, agentsPerModel);
  if (problems.length > 0) {
    const shown = problems.slice(0, 10).join('\n  ');
    const more = problems.length > 10 ? `\n  ... and ${problems.length - 10} more` : '';
    throw new UsageError(
      `${problems.length} problem(s) prevent the run; nothing was started (exclude tasks with -x GLOB):\n  ${shown}${more}`,
    );
  }

  // Run.
  const reporterNamesGiven = [...(options.reporter ?? ['default']), ...(options.json ? ['json'] : [])];
  // `--json` alone keeps the human output on standard error beside the document.
  if (options.json && !options.reporter) reporterNamesGiven.unshift('default');
  const reporterContext: ReporterContext = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    ci: Boolean(process.env.CI),
    dataset: options.path,
    agent: agent.info.name,
    total: plan.length,
    scope,
    ...(options.quiet ? { quiet: true } : {}),
  };
  const reporter = combineReporters(createReporters(reporterNamesGiven, reporterContext));
  const machine = ownsStdout(reporterNamesGiven);
  const human = (text: string) => (machine ? process.stderr.write(text) : process.stdout.write(text));
  for (const note of notes) process.stderr.write(`berth: ${note}\n`);
  stopIfInterrupted();
  if (!machine && process.stdout.isTTY && !process.env.CI)
    process.stderr.write(`berth: running ${plan.length} trial(s), ${concurrency} at a time...\n`);
  const jobLabel = jobName;
  const submitter = options.queue ? await openQueue(options, models?.limits) : undefined;
  const queueLabel = options.queue
    ? (await import('../queue/connection.ts')).redactedUrl(options.queue)
    : undefined;
  // With a queue, each worker calls the models through its own gateway, with its own keys.
  const gateway = models && !submitter ? await startRunGateway(models) : undefined;
  const summary = await runJob({
    jobsDir: resolve(options.jobsDir),
    jobName,
    source: basename(resolve(options.path)).replace(/\.(jsonl?|ndjson)$/i, ''),
    plan,
    agent,
    agentSpec: { name: options.agent, options: agentOptions },
    providers,
    verifiers,
    environment: environmentOptions,
    limits,
    ...(options.rules ? { rules: options.rules } : {}),
    ...(options.allowEnvSecrets ? { allowEnvSecrets: true } : {}),
    // On a queue every trial is in flight at once; the workers decide how many run.
    concurrency: submitter ? plan.length : concurrency,
    ...(submitter ? { runner: submitter.runner } : {}),
    attempts,
    selection: {
      path: resolve(options.path),
      ...(options.include ? { include: options.include } : {}),
      ...(options.exclude ? { exclude: options.exclude } : {}),
      ...(limit !== undefined ? { limit } : {}),
    },
    timeoutMultiplier: multiplier,
    phaseMultipliers: {
      ...(phase.agent !== undefined ? { agent: phase.agent } : {}),
      ...(phase.verifier !== undefined ? { verifier: phase.verifier } : {}),
      ...(phase.build !== undefined ? { environmentBuild: phase.build } : {}),
      ...(phase.agentSetup !== undefined ? { agentSetup: phase.agentSetup } : {}),
    },
    ...(agentTimeout !== undefined ? { agentTimeoutSec: agentTimeout } : {}),
    retry: harbor.retry,
    ...(harbor.artifacts.length > 0 ? { artifacts: harbor.artifacts } : {}),
    ...(options.disableVerification || Object.keys(harbor.verifierEnv).length > 0
      ? {
          verification: {
            ...(options.disableVerification ? { disable: true } : {}),
            ...(Object.keys(harbor.verifierEnv).length > 0 ? { env: harbor.verifierEnv } : {}),
          },
        }
      : {}),
    ...(options.debug ? { debug: true } : {}),
    ...(options.quiet ? { quiet: true } : {}),
    config: {
      dataset: resolve(options.path),
      agent_name: options.agent,
      ...(options.predictions ? { predictions: resolve(options.predictions) } : {}),
      ...commandAgentRecord(commandAgent, agentTimeout),
      ...(models?.record ?? {}),
      attempts,
      include: options.include ?? [],
      exclude: options.exclude ?? [],
      limit: limit ?? null,
      repos: options.repos ? resolve(options.repos) : null,
      env: options.env ?? null,
      rules: options.rules ?? 'default',
      ...(queueLabel ? { queue: queueLabel } : {}),
      ...(skipped.length > 0
        ? {
            skipped_tasks: skipped.map((s) => ({
              task: basename(s.dir),
              problems: s.issues.map((i) => InputError.all([i]).message),
            })),
          }
        : {}),
    },
    identity: {
      // A job graded under the SWE-bench or Harbor rules is another job than one under berth's.
      ...(options.rules && options.rules !== 'default' ? { rules: options.rules } : {}),
      dataset: resolve(options.path),
      agent: options.agent,
      predictions: options.predictions ? resolve(options.predictions) : null,
      attempts,
      ...commandAgentRecord(commandAgent, agentTimeout),
      ...(models ? { models: models.targets.map((t) => t.id) } : {}),
    },
    filters: {
      include: options.include ?? [],
      exclude: options.exclude ?? [],
      limit: limit ?? null,
    },
    signal: interrupt.signal,
    onTrialStart: (trial) => reporter.onTrialStart?.(trialStartEventOf(trial, jobLabel, agent.info)),
    onTrialEnd: (result, info) => reporter.onTrialEnd(result, trialEndEventOf(result, jobLabel, info.reused)),
    onNotice: (message) => process.stderr.write(`berth: ${message}\n`),
    onEvent: (event) => {
      // --debug: every event as a log line (the job.log / trial.log form) on standard error.
      if (options.debug) process.stderr.write(`${eventText(event)}\n`);
      reporter.onEvent(event);
      if (event.type === 'job-start') void reporter.onJobStart(event);
    },
    ...(gateway ? { models: { gateway, ...(models?.limits ? { limits: models.limits } : {}) } } : {}),
  }).finally(async () => {
    await gateway?.stop();
    await submitter?.close();
  });
  // SWE-bench datasets: the harness's final report, in the job folder and in --json.
  const swebench = plan.some((p) => p.task.verifier.kind === 'swebench')
    ? buildSwebenchReport(
        summary.trials,
        plan.map((p) => p.task.name),
        withoutPrediction,
        attempts,
      )
    : null;
  if (swebench) await writeSwebenchReport(summary.job_dir, swebench);
  await reporter.onJobEnd({ summary, swebench }, jobEndEventOf(summary));
  human(`results: ${summary.job_dir}\n`);
  // The HTML report (src/reporters/html/report.ts); a failure to write it never fails the run.
  const { writeJobReport } = await import('../reporters/html/report.ts');
  await writeJobReport(summary.job_dir).then(
    (path) => human(`report: ${path}\n`),
    (error: Error) =>
      process.stderr.write(`berth: warning: the HTML report was not written: ${error.message}\n`),
  );
  if (interrupt.signal.aborted) return interrupt.exitCode() ?? 130;
  if (skipped.length > 0) {
    process.stderr.write(
      `berth: ${skipped.length} invalid task(s) were skipped (listed above): ${skipped
        .slice(0, 5)
        .map((s) => basename(s.dir))
        .join(', ')}${skipped.length > 5 ? ', ...' : ''}; exit 2\n`,
    );
    return 2;
  }
  return 0;
}

/**
 * The queue of `--queue`, checked before the job starts.
 * @throws UsageError for a bad URL, an unreachable queue, or an option workers cannot honour.
 */
async function openQueue(options: RunCommandOptions, modelLimits: ModelTrialLimits | undefined) {
  if (options.modelBudget !== undefined || options.modelCache)
    throw new UsageError(
      `${options.modelBudget !== undefined ? '--model-budget' : '--model-cache'} with --queue: not supported (each worker has its own model gateway; docs/scale-out.md)`,
    );
  const { QueueSubmitter } = await import('../queue/submitter.ts');
  const { maxBlobBytes } = await import('../queue/blobs.ts');
  return QueueSubmitter.open({
    address: { url: options.queue as string, ...(options.queueCa ? { caFile: options.queueCa } : {}) },
    datasetPath: options.path as string,
    maxBlobBytes: maxBlobBytes(options.maxBlobMb),
    ...(modelLimits ? { modelLimits } : {}),
  });
}

/**
 * Asks the Docker engine whether an image is present (answers cached), when some task runs in
 * the SWE-bench harness's instance image; undefined when none does or no engine answers.
 */
async function engineImageLookup(tasks: Task[]): Promise<((image: string) => Promise<boolean>) | undefined> {
  if (!tasks.some((t) => t.format === 'swebench' && t.environment.kind === 'docker')) return undefined;
  try {
    const { connectDocker } = await import('../environments/docker/client.ts');
    const { ImageService } = await import('../environments/docker/images.ts');
    const images = new ImageService((await connectDocker()).docker);
    const cache = new Map<string, Promise<boolean>>();
    return (image) => {
      let answer = cache.get(image);
      if (!answer) {
        answer = images.exists(image);
        cache.set(image, answer);
      }
      return answer;
    };
  } catch {
    return undefined;
  }
}
