/**
 * Agents by name (`berth run -a NAME`). Built in: `oracle`, `nop`,
 * `predictions` (needs `--predictions FILE`), `command` (needs
 * `--agent-command CMD`; runs any CLI agent), `deckhand` (berth's own coding
 * agent; needs `-m PROVIDER/NAME`; `terminus-2` runs it too, and says so).
 * Other modules add theirs with `registerAgent`.
 */
import { UsageError } from '../errors.ts';
import type { ModelTarget } from '../models/providers.ts';
import type { Agent } from './agent.ts';
import { cliAgentHint } from './cli-recipes.ts';
import { CommandAgent } from './command.ts';
import { DECKHAND, DeckhandAgent, type DeckhandOptions } from './deckhand/deckhand.ts';
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
  /** The model `-m` resolved to (agents that call models through the gateway). */
  modelTarget?: ModelTarget;
  /** The agent's own options (`--ak key=value`). */
  agentKwargs?: Record<string, string>;
  [key: string]: unknown;
}

/** Harbor's names for its Terminus agent: berth runs its own agent, deckhand, for them. */
export const TERMINUS_NAMES: readonly string[] = ['terminus-2', 'terminus', 'terminus-1'];

function kwargNumber(kwargs: Record<string, string>, keys: string[], integer: boolean): number | undefined {
  for (const key of keys) {
    const text = kwargs[key];
    if (text === undefined) continue;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
      throw new UsageError(`--ak ${key}=${text}: expected a positive ${integer ? 'whole number' : 'number'}`);
    return value;
  }
  return undefined;
}

/** deckhand's options from `-m` and `--ak` (max_steps / max_turns, max_observation_chars, context_chars, temperature, max_tokens). */
function deckhandOptions(name: string, options: AgentOptions): DeckhandOptions {
  if (!options.modelTarget)
    throw new UsageError(
      `agent \`${name}\` calls a model: give one with -m PROVIDER/NAME (see docs/models.md)`,
    );
  const kwargs = options.agentKwargs ?? {};
  const known = [
    'max_steps',
    'max_turns',
    'episodes',
    'max_observation_chars',
    'context_chars',
    'temperature',
    'max_tokens',
  ];
  const unknown = Object.keys(kwargs).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw new UsageError(`--ak ${unknown[0]}: ${DECKHAND} knows ${known.join(', ')}`);
  const maxSteps = kwargNumber(kwargs, ['max_steps', 'max_turns', 'episodes'], true);
  const maxObservationChars = kwargNumber(kwargs, ['max_observation_chars'], true);
  const contextChars = kwargNumber(kwargs, ['context_chars'], true);
  const maxOutputTokens = kwargNumber(kwargs, ['max_tokens'], true);
  const temperature = kwargs.temperature !== undefined ? Number(kwargs.temperature) : undefined;
  if (temperature !== undefined && !(temperature >= 0))
    throw new UsageError(`--ak temperature=${kwargs.temperature}: expected a number >= 0`);
  return {
    model: options.modelTarget,
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    ...(maxObservationChars !== undefined ? { maxObservationChars } : {}),
    ...(contextChars !== undefined ? { contextChars } : {}),
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(name !== DECKHAND ? { requestedAs: name } : {}),
  };
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
  [DECKHAND, (options) => new DeckhandAgent(deckhandOptions(DECKHAND, options))],
  ...TERMINUS_NAMES.map(
    (name) => [name, (options: AgentOptions) => new DeckhandAgent(deckhandOptions(name, options))] as const,
  ),
]);

/** Adds (or replaces) an agent factory under `name`. */
export function registerAgent(name: string, factory: AgentFactory): void {
  factories.set(name, factory);
}

/** The registered agent names, sorted. */
export function agentNames(): string[] {
  // Harbor's older Terminus names work but are not listed.
  return [...factories.keys()].filter((name) => name !== 'terminus' && name !== 'terminus-1').sort();
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
