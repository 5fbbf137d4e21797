/**
 * Agents by name (`berth run -a NAME`). Built in: `oracle`, `nop`,
 * `predictions` (needs `--predictions FILE`), `command` (needs
 * `--agent-command CMD`; runs any CLI agent), `deckhand` (berth's own coding
 * agent; needs `-m PROVIDER/NAME`; `terminus-2` runs it too, and says so), and the
 * installed coding agents `claude-code`, `codex`, `gemini-cli`, `opencode`, `qwen-code`
 * (Harbor's names; src/agents/installed/). Other modules add theirs with `registerAgent`.
 */
import { UsageError } from '../errors.ts';
import type { ModelTarget } from '../models/providers.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import type { Agent, AgentContext } from './agent.ts';
import { CommandAgent } from './command.ts';
import { DECKHAND, DeckhandAgent, type DeckhandOptions } from './deckhand/deckhand.ts';
import { InstalledAgent } from './installed/agent.ts';
import { AGENT_PACKAGES, INSTALLED_AGENT_NAMES } from './installed/packages.ts';
import { resolveAgentVersion } from './installed/prepare.ts';
import type { ModelEndpoint } from './installed/recipes.ts';
import { NopAgent } from './nop.ts';
import { OracleAgent } from './oracle.ts';
import { loadPredictions, PredictionsAgent } from './predictions.ts';
import { ScriptOracleAgent } from './script-oracle.ts';

export interface AgentOptions {
  /** Predictions file for the `predictions` agent. */
  predictionsFile?: string;
  /**
   * The `predictions` agent on a task with no prediction: `skip` (default: such tasks are not
   * planned) or `empty` (it submits an empty patch, as `berth multilingual run` always did).
   */
  predictionsMissing?: 'skip' | 'empty';
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
  /** Version of an installed agent (`--agent-version`: exact, a tag or a range). */
  agentVersion?: string;
  /** The agent's own options (`--ak key=value`). */
  agentKwargs?: Record<string, string>;
  /** Where a trial's agent reaches its model (the gateway's session for the trial). */
  modelEndpoint?: (context: AgentContext) => ModelEndpoint | undefined;
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

/** Harbor's agents that berth cannot run here, and why (one line each). */
const UNAVAILABLE: Readonly<Record<string, string>> = {
  aider: 'aider comes from PyPI (aider-chat), which this machine cannot reach',
  'mini-swe-agent': 'mini-swe-agent comes from PyPI, which this machine cannot reach',
  openhands: 'OpenHands comes from PyPI (openhands-ai), which this machine cannot reach',
  'swe-agent':
    'SWE-agent comes from PyPI and runs its own containers: run it with its own CLI, then grade its output with -a predictions --predictions FILE',
  goose: 'goose installs from GitHub releases (a download script), which this machine cannot reach',
};

const factories = new Map<string, AgentFactory>([
  ['oracle', () => new ScriptOracleAgent(new OracleAgent())],
  ['nop', () => new NopAgent()],
  [
    'predictions',
    async (options) => {
      if (!options.predictionsFile) throw new UsageError('agent `predictions` needs --predictions FILE');
      return new PredictionsAgent(await loadPredictions(options.predictionsFile), {
        ...(options.predictionsMissing === 'empty' ? { missing: 'empty' } : {}),
      });
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
    const why = UNAVAILABLE[name];
    if (why) throw new UsageError(`agent ${JSON.stringify(name)} is not available: ${why}`);
    throw new UsageError(
      `unknown agent ${JSON.stringify(name)}${didYouMean(name, [...agentNames(), ...Object.keys(UNAVAILABLE)])}; known agents: ${agentNames().join(', ')}`,
    );
  }
  return factory(options);
}

for (const name of INSTALLED_AGENT_NAMES) {
  factories.set(name, async (options) => {
    if (!options.model)
      throw new UsageError(
        `agent ${JSON.stringify(name)} needs a model: -m PROVIDER/NAME (it calls the model through berth's gateway; see docs/agents.md)`,
      );
    const version = await resolveAgentVersion(AGENT_PACKAGES[name], options.agentVersion).catch((error) => {
      throw new UsageError((error as Error).message);
    });
    return new InstalledAgent({
      name,
      version,
      ...(options.model !== undefined ? { model: options.model } : {}),
      ...(options.agentKwargs ? { options: options.agentKwargs } : {}),
      ...(options.agentEnv ? { env: options.agentEnv } : {}),
      ...(options.modelEndpoint ? { endpoint: options.modelEndpoint } : {}),
    });
  });
}
// Harbor's older name of Qwen Code's agent.
factories.set('qwen-coder', (options) => createAgent('qwen-code', options));
