/**
 * Stage 3 of the pipeline: run the agent. An agent either acts inside the
 * environment (installed CLI agents, model-driven agents, the Harbor oracle
 * running solve.sh) or hands back a patch that the trial applies (the SWE-bench
 * oracle and recorded predictions). Both are the same interface.
 */
import type { Environment, ToolInstall } from '../environments/environment.ts';
import type { GatewaySession } from '../models/gateway.ts';
import type { Task } from '../tasks/task.ts';
import type { TrialEmit } from '../trials/events.ts';

export interface AgentContext {
  task: Task;
  environment: Environment;
  /** 1-based attempt number (`-k`). */
  attempt: number;
  /** Host folder for the agent's logs (mounted as /logs/agent in containers). */
  logDir: string;
  /** Agent timeout in seconds, after multipliers. */
  timeoutSec?: number;
  signal?: AbortSignal;
  /**
   * Emits the agent's own events (model calls, tool calls, messages) into the trial's event log;
   * the engine stamps the time, job and trial (src/trials/events.ts). Absent outside a trial.
   */
  emit?: TrialEmit;
  /**
   * The trial's session on the job's model gateway, when the job runs with `-m` (see
   * docs/models.md): its token, endpoints and the record of every call. Agents call models
   * only through it.
   */
  models?: GatewaySession;
  /**
   * The engine halts the environment as soon as `run` returns (`Environment.halt`: the work is
   * taken into a fresh environment, src/trials/agent-work.ts). An agent whose work is one
   * command in the environment runs it with `ExecOptions.haltOnExit`, so nothing that command
   * left running acts between its end and the halt. An agent driven from the host (many
   * commands) leaves it: its window is berth's own latency to the halt.
   */
  haltsOnReturn?: boolean;
}

export interface AgentResult {
  /**
   * A unified diff to apply to the base repository (SWE-bench predictions). Undefined when
   * the agent acted in the environment itself; '' when it submitted nothing.
   */
  patch?: string;
  /** Model or agent identity as SWE-bench's `model_name_or_path`. */
  modelName?: string;
  /** Free-form details kept in the trial result (token counts, cost, ...). */
  metadata?: Record<string, unknown>;
  /**
   * True when the agent acted in its environment and `patch` is the diff it left there (the
   * `command` agent on SWE-bench rows): the trial grades the patch in a fresh environment, as
   * SWE-bench applies predictions in a new container, so nothing else the agent left behind
   * (processes, ignored files, changed git config, files outside the repository) reaches the verifier.
   */
  gradeInFreshEnvironment?: boolean;
}

/** What an agent's set-up step gets (Harbor's `BaseInstalledAgent.setup`). */
export interface AgentSetupContext extends Omit<AgentContext, 'timeoutSec'> {
  /** The job's multiplier for the agent phases; the agent scales its own set-up limit by it. */
  timeoutMultiplier: number;
}

export interface AgentInfo {
  name: string;
  version: string;
  modelName?: string;
}

export interface Agent {
  readonly info: AgentInfo;
  /**
   * Files the agent needs in its environment (installed agents: their CLI and its runtime),
   * installed by the environment at start, once per base image (see `ToolInstall`).
   */
  readonly tool?: ToolInstall;
  run(context: AgentContext): Promise<AgentResult>;
  /**
   * Optional install step, run once per trial after the environment started and before
   * `run` (Harbor's agent setup phase, timed as `agent_setup`). It enforces its own time
   * limit; a throw ends the trial as an error without verification.
   */
  setup?(context: AgentSetupContext): Promise<void>;
  /**
   * The patch this agent will submit for a task, when it is known before running
   * (oracle, nop, recorded predictions); undefined for agents that act live.
   * The job uses it to decide whether a finished trial can be kept on resume.
   */
  plannedPatch?(task: Task): string | undefined;
}
