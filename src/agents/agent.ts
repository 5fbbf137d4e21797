/**
 * Stage 3 of the pipeline: run the agent. An agent either acts inside the
 * environment (installed CLI agents, model-driven agents, the Harbor oracle
 * running solve.sh) or hands back a patch that the trial applies (the SWE-bench
 * oracle and recorded predictions). Both are the same interface.
 */
import type { Environment } from '../environments/environment.ts';
import type { Task } from '../tasks/task.ts';

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
}

export interface AgentInfo {
  name: string;
  version: string;
  modelName?: string;
}

export interface Agent {
  readonly info: AgentInfo;
  run(context: AgentContext): Promise<AgentResult>;
  /**
   * The patch this agent will submit for a task, when it is known before running
   * (oracle, nop, recorded predictions); undefined for agents that act live.
   * The job uses it to decide whether a finished trial can be kept on resume.
   */
  plannedPatch?(task: Task): string | undefined;
}
