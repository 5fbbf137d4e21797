/**
 * The installed coding agents (`-a claude-code|codex|gemini-cli|opencode|qwen-code`, Harbor's
 * names): the vendor's real CLI, installed once per (agent, version, base image) from a
 * folder prepared on the host (src/agents/installed/prepare.ts) into a cached image layer or
 * a read-only bind (the environment does it at start: `Agent.tool`), run headless inside the
 * environment through berth's model gateway (src/agents/installed/recipes.ts).
 *
 * - Set-up (`agent_setup`): reports the install (its log in `agent/setup/install.log`; a
 *   failed install is an `AgentSetupError`), then runs `<cli> --version` in the environment as
 *   the agent user and records the exact version.
 * - Run: the recipe's command through the `command` agent (logs in `agent/command/`, the agent
 *   timeout, SWE-bench rows graded on the diff), the native log kept as `agent/<name>.txt`
 *   and, where its format allows, converted to `agent/trajectory.json` (ATIF).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  logsPath,
  type Platform,
  type ToolInstall,
  type ToolInstallRecord,
} from '../../environments/environment.ts';
import { UsageError } from '../../errors.ts';
import { gatewayAccess } from '../../models/access.ts';
import { readInside } from '../../results/safe-read.ts';
import { writeFileAtomic, writeJsonAtomic } from '../../util/atomic-write.ts';
import { shellQuote } from '../../util/shell.ts';
import type { Agent, AgentContext, AgentInfo, AgentResult, AgentSetupContext } from '../agent.ts';
import { AgentSetupError, CommandAgent } from '../command.ts';
import { AGENT_PACKAGES, type InstalledAgentName, platformKey } from './packages.ts';
import { prepareAgent } from './prepare.ts';
import { checkOptions, endpointsAt, type ModelEndpoint, RECIPES } from './recipes.ts';
import { type TrajectoryContext, trajectoryFromNativeLog } from './trajectory.ts';

/** Largest native log kept and converted, in bytes. */
const MAX_LOG_BYTES = 64 * 1024 * 1024;

/** Limit of the in-environment version check, in seconds (before multipliers). */
const VERSION_CHECK_SEC = 60;

export interface InstalledAgentOptions {
  name: InstalledAgentName;
  /** Exact version (resolved: see `resolveAgentVersion`). */
  version: string;
  /** The model as given to `-m` (`anthropic/claude-sonnet-4-5`). */
  model?: string;
  /** The agent's own options (`--ak`). */
  options?: Record<string, string>;
  /** Extra variables for the agent (`--ae`). */
  env?: Record<string, string>;
  /** Where the trial's agent reaches its model (the gateway session); undefined: no model. */
  endpoint?: (context: AgentContext) => ModelEndpoint | undefined;
}

/** What the set-up found, kept for the result. */
interface SetupRecord {
  version: string;
  platform: Platform;
  installed: boolean;
  install_sec: number;
  version_check_sec: number;
}

export class InstalledAgent implements Agent {
  readonly info: AgentInfo;
  readonly tool: ToolInstall;
  private setupRecord: SetupRecord | undefined;

  constructor(private readonly options: InstalledAgentOptions) {
    const pkg = AGENT_PACKAGES[options.name];
    checkOptions(options.name, options.options ?? {});
    this.info = {
      name: options.name,
      version: options.version,
      ...(options.model ? { modelName: options.model } : {}),
    };
    this.tool = {
      name: options.name,
      version: options.version,
      prepare: (platform, log) => prepareAgent(pkg, options.version, platform, log),
    };
  }

  private get command(): string {
    return AGENT_PACKAGES[this.options.name].command;
  }

  async setup(context: AgentSetupContext): Promise<void> {
    const { environment, logDir } = context;
    const record = environment.toolInstall;
    const dir = join(logDir, 'setup');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'install.log'), installLog(this.options.name, this.options.version, record));
    if (!record)
      throw new AgentSetupError(
        `the ${environment.kind} environment cannot install ${this.options.name} (installed agents run in docker and local environments)`,
      );
    if (record.error) throw new AgentSetupError(`${record.error} (see agent/setup/install.log)`);
    // A fresh install is started once (`--version`); a cached one was started when it was
    // installed, so later trials only check that its files are there and read its manifest.
    const home = shellQuote(record.home);
    const command = record.installed
      ? `${home}/bin/${this.command} --version`
      : `test -x ${home}/bin/${this.command} && cat ${home}/berth-agent.json`;
    const check = await environment.exec(command, {
      timeoutSec: VERSION_CHECK_SEC * context.timeoutMultiplier,
      env: { HOME: '/tmp', NO_COLOR: '1' },
      ...(record.binds ? { binds: record.binds } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    });
    await writeFile(join(dir, 'version.txt'), check.output);
    if (check.exitCode !== 0)
      throw new AgentSetupError(
        `${this.options.name} ${this.options.version} does not start in the environment (${platformKey(record.platform)}): \`${command}\` ${check.timedOut ? 'timed out' : `exited ${check.exitCode ?? check.signal}`}: ${check.output.trim().split('\n').slice(-3).join(' | ')}`,
      );
    if (!check.output.includes(this.options.version))
      throw new AgentSetupError(
        `${this.options.name} reports version ${JSON.stringify(check.output.trim().slice(0, 200))}, not ${this.options.version}`,
      );
    this.setupRecord = {
      version: this.options.version,
      platform: record.platform,
      installed: record.installed,
      install_sec: record.durationSec,
      version_check_sec: Math.round(check.durationSec * 1000) / 1000,
    };
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const record = context.environment.toolInstall;
    if (!record || record.error)
      throw new AgentSetupError(`${this.options.name} is not installed in the environment`);
    const endpoint = this.options.endpoint?.(context);
    if (!endpoint)
      throw new UsageError(
        `${this.options.name} needs a model: pass -m PROVIDER/NAME (it calls the model through berth's gateway)`,
      );
    // The trial's gateway session: the relay on its Unix socket (src/models/access.ts, started by
    // the command agent in front of the CLI). Without a session (a caller's own endpoint, e.g. a
    // server on this machine): that origin as it is.
    const origin = gatewayAccess(context)?.origin ?? endpoint.origin;
    const recipe = RECIPES[this.options.name];
    const input = {
      endpoints: endpointsAt(origin),
      token: endpoint.token,
      model: endpoint.model,
      options: this.options.options ?? {},
      ...(context.task.mcpServers?.length ? { mcpServers: context.task.mcpServers } : {}),
      ...(context.task.skillsDir ? { skillsDir: context.task.skillsDir } : {}),
    };
    const command = new CommandAgent({
      command: recipe.script(input),
      env: { ...recipe.env(input), ...(this.options.env ?? {}), BERTH_AGENT_HOME: record.home },
      ...(this.options.model ? { model: this.options.model } : {}),
      ...(record.binds?.length ? { mounts: record.binds.map((b) => b.path) } : {}),
    });
    let result: AgentResult;
    let steps: number | undefined;
    try {
      result = await command.run(context);
    } finally {
      // The agent's log folder is copied out after the phase; its output is needed now (as data).
      await context.environment
        .download(
          `${logsPath(context.environment, 'agent')}/command/stdout.txt`,
          join(context.logDir, 'command', 'stdout.txt'),
          { maxBytes: MAX_LOG_BYTES },
        )
        .catch(() => undefined);
      const totals = context.models?.totals();
      steps = await keepNativeLog(context.logDir, {
        agent: this.options.name,
        version: this.options.version,
        model: endpoint.model,
        instruction: context.task.instruction,
        ...(totals ? { usage: { ...totals.usage, costUsd: totals.costUsd } } : {}),
      });
    }
    return {
      ...result,
      metadata: {
        ...(result.metadata ?? {}),
        agent: this.options.name,
        agent_version: this.options.version,
        ...(steps !== undefined ? { trajectory_steps: steps } : {}),
        ...(this.setupRecord ? { install: this.setupRecord } : {}),
      },
    };
  }
}

/**
 * Keeps the CLI's own output (stream-json / JSON events) as `<logDir>/<agent>.txt`, Harbor's
 * name, and converts it to `<logDir>/trajectory.json`; returns the trajectory's step count.
 * The output file was written inside the environment: it is read without following a link,
 * as a regular file only, at most 64 MiB; anything else is left alone (no log, no trajectory).
 */
export async function keepNativeLog(logDir: string, context: TrajectoryContext): Promise<number | undefined> {
  const log = await readInside(logDir, 'command/stdout.txt', MAX_LOG_BYTES);
  if (!log) return undefined;
  await writeFileAtomic(join(logDir, `${context.agent}.txt`), log.text);
  const trajectory = trajectoryFromNativeLog(log.text, context);
  if (!trajectory) return undefined;
  await writeJsonAtomic(join(logDir, 'trajectory.json'), trajectory);
  return trajectory.steps.length;
}

function installLog(name: string, version: string, record: ToolInstallRecord | undefined): string {
  const head = [`agent: ${name} ${version}`];
  if (record) {
    head.push(
      `home: ${record.home || '(none)'}`,
      `platform: ${platformKey(record.platform)}`,
      `installed now: ${record.installed} (${record.durationSec} s; false: the cached install)`,
    );
  }
  return `${[...head, '', ...(record?.log ?? ['the environment installed nothing'])].join('\n')}\n`;
}
