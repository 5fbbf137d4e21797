/**
 * Agents by name (`berth run -a NAME`). Built in: `oracle`, `nop`,
 * `predictions` (needs `--predictions FILE`). Other modules add theirs with
 * `registerAgent`.
 */
import { UsageError } from '../errors.ts';
import type { Agent } from './agent.ts';
import { NopAgent } from './nop.ts';
import { OracleAgent } from './oracle.ts';
import { loadPredictions, PredictionsAgent } from './predictions.ts';
import { ScriptOracleAgent } from './script-oracle.ts';

export interface AgentOptions {
  /** Predictions file for the `predictions` agent. */
  predictionsFile?: string;
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
 * @throws UsageError for an unknown name (the message lists the known ones);
 *   InputError from the agent's own input (a bad predictions file).
 */
export async function createAgent(name: string, options: AgentOptions = {}): Promise<Agent> {
  const factory = factories.get(name);
  if (!factory)
    throw new UsageError(`unknown agent ${JSON.stringify(name)}; known agents: ${agentNames().join(', ')}`);
  return factory(options);
}
