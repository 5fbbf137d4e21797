/**
 * Agents by name (`berth run -a NAME`). Built in: `oracle`, `nop`,
 * `predictions` (needs `--predictions FILE`), `command` (needs
 * `--agent-command CMD`; runs any CLI agent). Other modules add theirs with
 * `registerAgent`.
 */
import { UsageError } from '../errors.ts';
import type { Agent } from './agent.ts';
import { cliAgentHint } from './cli-recipes.ts';
import { CommandAgent } from './command.ts';
import { NopAgent } from './nop.ts';
import { OracleAgent } from './oracle.ts';
import { loadPredictions, PredictionsAgent } from './predictions.ts';
import { ScriptOracleAgent } from './script-oracle.ts';

export interface AgentOptions {
  /** Predictions file for the `predictions` agent. */
  predictionsFile?: string;
  /** Command line for the `command` agent (`--agent-command`). */
  agentCommand?: string;
  /** Set-up command for the `command` agent (`--agent-setup`). */
  agentSetup?: string;
  /** Limit of the set-up command in seconds (`--agent-setup-timeout`). */
  agentSetupTimeoutSec?: number;
  /** Variables for the `command` agent (`--agent-env`). */
  agentEnv?: Record<string, string>;
  /** Model name (`--model`). */
  model?: string;
  /** Host folders the `command` agent may read (`--agent-mount`). */
  agentMounts?: string[];
  [key: string]: unknown;
}

export type AgentFactory = (options: AgentOptions) => Promise<Agent> | Agent;

const factories = new Map<string, AgentFactory>([
  ['oracle', () => new ScriptOracleAgent(new OracleAgent())],
  ['nop', () => new NopAgent()],
  [
    'predictions',
    async (options) => {
      if (!options.predictionsFile) throw new UsageError('agent `predictions` needs --predictions FILE');
      return new PredictionsAgent(await loadPredictions(options.predictionsFile));
    },
  ],
  [
    'command',
    (options) => {
      if (!options.agentCommand || options.agentCommand.trim() === '')
        throw new UsageError('agent `command` needs --agent-command CMD');
      return new CommandAgent({
        command: options.agentCommand,
        ...(options.agentSetup !== undefined ? { setup: options.agentSetup } : {}),
        ...(options.agentSetupTimeoutSec !== undefined
          ? { setupTimeoutSec: options.agentSetupTimeoutSec }
          : {}),
        ...(options.agentEnv ? { env: options.agentEnv } : {}),
        ...(options.model !== undefined ? { model: options.model } : {}),
        ...(options.agentMounts?.length ? { mounts: options.agentMounts } : {}),
      });
    },
  ],
]);

/** Adds (or replaces) an agent factory under `name`. */
export function registerAgent(name: string, factory: AgentFactory): void {
  factories.set(name, factory);
}

/** The registered agent names, sorted. */
export function agentNames(): string[] {
  return [...factories.keys()].sort();
}

/**
 * Creates an agent by name.
 * @throws UsageError for an unknown name (the message lists the known ones, or, for a CLI
 *   agent Harbor ships such as `claude-code`, shows the `-a command` line that runs it);
 *   InputError from the agent's own input (a bad predictions file).
 */
export async function createAgent(name: string, options: AgentOptions = {}): Promise<Agent> {
  const factory = factories.get(name);
  if (!factory) {
    const hint = cliAgentHint(name);
    if (hint) throw new UsageError(hint);
    throw new UsageError(`unknown agent ${JSON.stringify(name)}; known agents: ${agentNames().join(', ')}`);
  }
  return factory(options);
}
