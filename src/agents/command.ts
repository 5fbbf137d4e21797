/**
 * The `command` agent: runs any command line inside the trial's environment, as
 * Harbor's installed agents run a CLI agent headless (`BaseInstalledAgent`,
 * `src/harbor/agents/installed/base.py`): any CLI agent berth has no agent of its
 * own for; the installed agents (src/agents/installed/) run their CLIs through it.
 *
 * - The command runs with `bash -c` (sh without bash) through the
 *   environment's `exec`, so local and Docker environments both work, in the
 *   task's working folder (the repository for SWE-bench rows).
 * - The instruction (SWE-bench's `problem_statement`, Harbor's instruction.md)
 *   is written to `instruction.md` in the agent log folder; its path is in
 *   `BERTH_INSTRUCTION_FILE`. Also set: `BERTH_AGENT_LOG_DIR` (the log folder as
 *   the command sees it: `/logs/agent` in containers, `<environment>/logs/agent`
 *   locally; copied into the trial's `agent/` as data after the phase), `BERTH_TASK_NAME`,
 *   `BERTH_ATTEMPT`, `BERTH_WORKDIR` and, with `--model`, `BERTH_MODEL`; a task with MCP
 *   servers sets `BERTH_MCP_SERVERS` (`{"mcpServers": {...}}` as Claude Code's `.mcp.json`),
 *   one with `skills_dir` sets `BERTH_SKILLS_DIR`.
 *   `--agent-env` values are passed to the set-up and agent commands only,
 *   never to the verifier.
 * - stdout and stderr go to `agent/command/stdout.txt` and `stderr.txt` (each cut to
 *   50 MiB after the command, with a `[berth: output truncated ...]` line), the exit
 *   code to `agent/command/return-code.txt`. A non-zero exit does not fail the
 *   trial: the verifier decides (as for Harbor's oracle).
 * - The agent timeout (the task's, times the multipliers) kills the command's
 *   process group and is recorded as Harbor's `AgentTimeoutError`; the trial is
 *   still graded on what the agent left (Harbor still runs the verifier).
 * - SWE-bench rows: the submitted patch is the repository's diff against the
 *   base commit after the command exits (`git add -A && git diff --cached`, as
 *   SWE-bench agents such as mini-swe-agent submit), graded in a fresh
 *   environment (`gradeInFreshEnvironment`), and written as a SWE-bench prediction
 *   to `agent/prediction.json` (`model_name_or_path`: the `--model` name, else
 *   `command`). Harbor tasks: the agent acts in the
 *   environment and the verifier runs there.
 * - Network: SWE-bench rows and local environments give the set-up and agent
 *   commands the network (the agent must reach its model; the tests still run
 *   without); Harbor tasks in containers keep the task's `[agent] network_mode`.
 * - An optional set-up command (`--agent-setup`, Harbor's install step) runs once
 *   per trial before the agent, its own limit (default 360 s,
 *   Harbor's `_AGENT_SETUP_TIMEOUT_SEC`), output in `agent/setup/`; a non-zero exit
 *   is an `AgentSetupError`, a timeout an `AgentSetupTimeoutError` (the trial ends
 *   as an error without verification).
 */
import { join } from 'node:path';
import {
  type Environment,
  type ExecOptions,
  type ExecResult,
  logsPath,
} from '../environments/environment.ts';
import { gatewayAccess } from '../models/access.ts';
import { DEFAULT_OUTPUT_BYTES } from '../sandbox/limits.ts';
import { redactSecrets } from '../sandbox/secrets.ts';
import type { McpServer } from '../tasks/task.ts';
import { AgentTimeoutError, AgentWorkError } from '../trials/errors.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { shellQuote } from '../util/shell.ts';
import { VERSION } from '../version.ts';
import type { Agent, AgentContext, AgentInfo, AgentResult, AgentSetupContext } from './agent.ts';

/** Harbor's default agent set-up limit in seconds (`_AGENT_SETUP_TIMEOUT_SEC`). */
export const DEFAULT_AGENT_SETUP_TIMEOUT_SEC = 360;

/** Largest diff the agent may submit, in bytes (a larger one is an error, never a cut patch). */
const MAX_DIFF_BYTES = 50 * 1024 * 1024;

/** The agent's set-up command failed (Harbor: "Agent install failed"). */
export class AgentSetupError extends Error {
  override name = 'AgentSetupError';
}
/** The agent's set-up command passed its limit (Harbor's AgentSetupTimeoutError). */
export class AgentSetupTimeoutError extends Error {
  override name = 'AgentSetupTimeoutError';
}

/** `K=V` for display, the value of a variable that looks like a credential (`looksSecret`) as `***`. */
export function describeEnv(env: Record<string, string>): string[] {
  return Object.entries(redactSecrets(env)).map(([k, v]) => `${k}=${v}`);
}

export interface CommandAgentOptions {
  /** Shell command line run in the environment's working folder. */
  command: string;
  /** Set-up command run once per trial before the agent (Harbor's install step). */
  setup?: string;
  /** Limit of the set-up command in seconds, before multipliers (default 360). */
  setupTimeoutSec?: number;
  /** Variables for the set-up and agent commands (`--agent-env`). */
  env?: Record<string, string>;
  /** Model name: recorded as SWE-bench's `model_name_or_path` / Harbor's model, passed as `BERTH_MODEL`. */
  model?: string;
  /**
   * Host folders the command may read (`--agent-mount`): in the local environment's sandbox
   * only the trial's folder, the agent log folder and these are seen through its private /tmp
   * and home (the rest of the host is read-only). Containers ignore it.
   */
  mounts?: readonly string[];
  /**
   * Bytes kept of each of the command's `stdout.txt` and `stderr.txt` (default 50 MiB,
   * `COMMAND_OUTPUT_CAP_BYTES`); the rest is cut after the command and a
   * `[berth: output truncated ...]` line appended.
   */
  outputCapBytes?: number;
}

/** Bytes kept of each of a command agent's output files (docs/security.md: "captured output"). */
export const COMMAND_OUTPUT_CAP_BYTES = DEFAULT_OUTPUT_BYTES;

/** Git with the repository's hooks, fsmonitor and path quoting neutralised (the agent may have changed its config). */
export const GIT =
  'git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.quotePath=false -c diff.noprefix=false -c diff.mnemonicPrefix=false -c diff.relative=false';

export class CommandAgent implements Agent {
  readonly info: AgentInfo;

  constructor(private readonly options: CommandAgentOptions) {
    if (options.command.trim() === '') throw new Error('the command agent needs a command');
    this.info = { name: 'command', version: VERSION, ...(options.model ? { modelName: options.model } : {}) };
    const setup = options.setup;
    if (setup !== undefined && setup.trim() !== '') this.setup = (context) => this.runSetup(context, setup);
  }

  /** Unknown until the command has run. */
  plannedPatch(): undefined {
    return undefined;
  }

  private env(context: AgentSetupContext | AgentContext, logs: string): Record<string, string> {
    return {
      ...(this.options.env ?? {}),
      BERTH_INSTRUCTION_FILE: `${logs}/instruction.md`,
      BERTH_AGENT_LOG_DIR: logs,
      BERTH_TASK_NAME: context.task.name,
      BERTH_ATTEMPT: String(context.attempt),
      BERTH_WORKDIR: context.environment.workdir,
      ...(this.options.model ? { BERTH_MODEL: this.options.model } : {}),
      // The task's MCP servers (Claude Code's `.mcp.json` shape) and skills folder, for the CLI to use.
      ...(context.task.mcpServers?.length
        ? { BERTH_MCP_SERVERS: JSON.stringify({ mcpServers: mcpServersJson(context.task.mcpServers) }) }
        : {}),
      ...(context.task.skillsDir ? { BERTH_SKILLS_DIR: context.task.skillsDir } : {}),
    };
  }

  /**
   * Runs `command` with stdout/stderr in `<logs>/<name>/` inside the environment (copied out
   * with the rest of the agent's log folder after the phase, src/trials/staging.ts); berth's
   * own records, the command (`<name>/command.txt`, variable names with secret values
   * masked) and its exit (`<name>/return-code.txt`), go straight to the trial folder, which
   * the command cannot write.
   */
  private async runLogged(
    context: AgentSetupContext | AgentContext,
    name: 'setup' | 'command',
    command: string,
    timeoutSec: number | undefined,
  ): Promise<ExecResult> {
    const { environment, logDir } = context;
    const logs = logsPath(environment, 'agent');
    // With -m the agent command reaches its model through the trial's gateway session only
    // (src/models/access.ts): its variables name the gateway and the trial's token.
    const access = name === 'command' ? gatewayAccess(context as AgentContext) : undefined;
    const env = {
      ...this.env(context, logs),
      ...(access && context.models ? context.models.agentEnv(access.origin) : {}),
    };
    await writeFileAtomic(
      join(logDir, name, 'command.txt'),
      `${command}\n\n# environment\n${describeEnv(env).join('\n')}\n`,
    );
    const dir = `${logs}/${name}`;
    const script = [
      `mkdir -p ${shellQuote(dir)} && exec >${shellQuote(`${dir}/stdout.txt`)} 2>${shellQuote(`${dir}/stderr.txt`)}`,
      ...(access?.prelude ? [access.prelude] : []),
      command,
    ].join('\n');
    const options: ExecOptions = {
      env,
      ...(this.options.mounts?.length || access?.binds.length
        ? { binds: [...(this.options.mounts ?? []).map((path) => ({ path })), ...(access?.binds ?? [])] }
        : {}),
      ...(timeoutSec !== undefined ? { timeoutSec } : {}),
      // An agent needs its model's API: SWE-bench rows (graded in a fresh environment, tests
      // without network) and local environments give it the network; Harbor tasks in
      // containers keep the task's agent network policy (switched by the trial).
      // With a gateway session the model is reached through it, whatever the network.
      ...(access
        ? access.network
          ? { network: access.network }
          : {}
        : environment.kind === 'local' || context.task.verifier.kind === 'swebench'
          ? { network: { mode: 'public' as const } }
          : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    };
    const result = await environment.exec(script, options);
    await this.capOutput(environment, dir, env, options);
    await writeFileAtomic(
      join(logDir, name, 'return-code.txt'),
      `${result.timedOut ? `timed out after ${timeoutSec} s` : (result.exitCode ?? result.signal ?? 'killed')}\n`,
    );
    return result;
  }

  /**
   * Cuts `stdout.txt` and `stderr.txt` in `dir` (in the environment) to the output cap and
   * marks the cut. Runs as the command's own user (a link it planted leads only where it could
   * write itself) and skips anything but a regular file.
   */
  private async capOutput(
    environment: AgentContext['environment'],
    dir: string,
    env: Record<string, string>,
    options: ExecOptions,
  ): Promise<void> {
    const cap = Math.max(0, Math.floor(this.options.outputCapBytes ?? COMMAND_OUTPUT_CAP_BYTES));
    const files = ['stdout.txt', 'stderr.txt'].map((f) => shellQuote(`${dir}/${f}`)).join(' ');
    const script = [
      `for f in ${files}; do`,
      '  [ -f "$f" ] && [ ! -L "$f" ] || continue',
      '  size=$(wc -c < "$f") || continue',
      `  [ "$size" -gt ${cap} ] || continue`,
      `  truncate -s ${cap} "$f" && printf '\\n[berth: output truncated at %s bytes; %s more bytes dropped]\\n' ${cap} "$((size - ${cap}))" >> "$f"`,
      'done',
    ].join('\n');
    await environment
      .exec(script, {
        env,
        timeoutSec: 60,
        ...(options.binds ? { binds: options.binds } : {}),
      })
      .catch(() => {});
  }

  /** Defined only with a set-up command, so a trial without one records no set-up phase. */
  readonly setup?: (context: AgentSetupContext) => Promise<void>;

  private async runSetup(context: AgentSetupContext, setup: string): Promise<void> {
    const limit =
      (this.options.setupTimeoutSec ?? DEFAULT_AGENT_SETUP_TIMEOUT_SEC) * context.timeoutMultiplier;
    const result = await this.runLogged(context, 'setup', setup, limit);
    if (result.timedOut)
      throw new AgentSetupTimeoutError(
        `the agent set-up command passed its limit of ${limit} s and was killed`,
      );
    if (result.exitCode !== 0)
      throw new AgentSetupError(
        `the agent set-up command exited with ${result.exitCode ?? result.signal} (see agent/setup/stderr.txt)`,
      );
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const { task, environment, logDir } = context;
    // berth's record, then the agent's copy in its log folder.
    await writeFileAtomic(join(logDir, 'instruction.md'), task.instruction);
    await environment.upload(
      join(logDir, 'instruction.md'),
      `${logsPath(environment, 'agent')}/instruction.md`,
    );
    const gradedOnDiff = task.verifier.kind === 'swebench';
    const base = gradedOnDiff ? await diffBase(environment) : undefined;

    const run = await this.runLogged(context, 'command', this.options.command, context.timeoutSec);
    const metadata: Record<string, unknown> = {
      command_exit_code: run.exitCode,
      duration_sec: run.durationSec,
      timed_out: run.timedOut,
      ...(run.oomKilled ? { oom_killed: true } : {}),
      env_names: Object.keys(this.options.env ?? {}),
    };
    if (run.exitCode !== 0 && !run.timedOut)
      await writeFileAtomic(join(logDir, 'exit-code.txt'), `${run.exitCode ?? run.signal}\n`);
    const result: AgentResult = {
      ...(this.options.model ? { modelName: this.options.model } : {}),
      metadata,
    };
    if (gradedOnDiff && base) {
      result.patch = await agentDiff(environment, base, context.signal);
      result.gradeInFreshEnvironment = true;
      metadata.diff_base = base;
      metadata.patch_bytes = Buffer.byteLength(result.patch);
      await writePrediction(logDir, task.name, this.options.model ?? 'command', result.patch);
    }
    if (run.timedOut)
      throw new AgentTimeoutError(
        `the agent command passed the agent timeout of ${context.timeoutSec} s and was killed`,
        result,
      );
    return result;
  }
}

/**
 * The commit an agent's diff is taken against: the one the environment made (local), else
 * HEAD before the agent runs.
 * @throws Error when the working folder is no git repository.
 */
export async function diffBase(environment: Environment): Promise<string> {
  const made = environment.baseCommit;
  if (made !== undefined) return made;
  const head = await environment.exec(`${GIT} rev-parse --verify -q HEAD`, { timeoutSec: 60 });
  if (head.exitCode !== 0) throw new Error(`no git repository in ${environment.workdir} to take the diff in`);
  return head.output.trim();
}

/**
 * The repository's changes against `base`, untracked files included and ignored ones not
 * (`git add -A && git diff --cached`), binary-safe, without renames (so every method of the
 * apply chain reads it).
 * @throws AgentWorkError when git fails on the work folder (a path git refuses, such as
 *   `.GIT/x`; a corrupt index; its timeout) or the diff passes 50 MiB: the agent's doing, never
 *   retried (src/trials/errors.ts).
 */
export async function agentDiff(
  environment: Pick<Environment, 'exec'>,
  base: string,
  signal?: AbortSignal,
): Promise<string> {
  const diff = `${GIT} diff --cached --binary --no-color --no-ext-diff --no-textconv --no-renames --src-prefix=a/ --dst-prefix=b/ ${shellQuote(base)} --`;
  // Only the diff reaches standard output; on a failure, the error and a non-zero exit.
  const command = [
    `err=$(${GIT} add -A . 2>&1 >/dev/null) || { printf 'git add: %s\n' "$err"; exit 3; }`,
    `${diff} 2>/dev/null || { ${diff} 2>&1 >/dev/null | tail -n 5; exit 4; }`,
  ].join('\n');
  const out = await environment.exec(command, {
    timeoutSec: 300,
    maxOutputBytes: MAX_DIFF_BYTES,
    ...(signal ? { signal } : {}),
  });
  if (out.truncated) throw new AgentWorkError(`its diff is larger than ${MAX_DIFF_BYTES} bytes`);
  if (out.exitCode !== 0)
    throw new AgentWorkError(
      `git failed on its work folder (${out.timedOut ? 'timed out' : `exit ${out.exitCode}`}): ${out.output.slice(-500)}`,
    );
  return out.output;
}

/** Writes the trial's SWE-bench prediction (`agent/prediction.json`), ready for `-a predictions` or SWE-bench's harness. */
export async function writePrediction(
  logDir: string,
  instanceId: string,
  model: string,
  patch: string,
): Promise<void> {
  await writeFileAtomic(
    join(logDir, 'prediction.json'),
    `${JSON.stringify({ instance_id: instanceId, model_name_or_path: model, model_patch: patch })}\n`,
  );
}

/** MCP servers as Claude Code's `.mcp.json` names them (`http` for streamable HTTP). */
export function mcpServersJson(servers: readonly McpServer[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    servers.map((server) => [
      server.name,
      server.transport === 'stdio'
        ? { type: 'stdio', command: server.command, args: server.args }
        : { type: server.transport === 'streamable-http' ? 'http' : 'sse', url: server.url },
    ]),
  );
}
