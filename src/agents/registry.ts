/**
 * Agents by name (`berth run -a NAME`). Built in: `oracle`, `nop`,
 * `predictions` (needs `--predictions FILE`), `command` (needs
 * `--agent-command CMD`; runs any CLI agent), and the installed coding agents
 * `claude-code`, `codex`, `gemini-cli`, `opencode`, `qwen-code` (Harbor's names;
 * src/agents/installed/). Other modules add theirs with `registerAgent`.
 */
import { UsageError } from '../errors.ts';
import type { Agent, AgentContext } from './agent.ts';
import { CommandAgent } from './command.ts';
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
  /** Version of an installed agent (`--agent-version`: exact, a tag or a range). */
  agentVersion?: string;
  /** An installed agent's own options (`--ak key=value`). */
  agentKwargs?: Record<string, string>;
  /** Where a trial's agent reaches its model (the gateway's session for the trial). */
  modelEndpoint?: (context: AgentContext) => ModelEndpoint | undefined;
  [key: string]: unknown;
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
    const why = UNAVAILABLE[name];
    if (why) throw new UsageError(`agent ${JSON.stringify(name)} is not available: ${why}`);
    throw new UsageError(`unknown agent ${JSON.stringify(name)}; known agents: ${agentNames().join(', ')}`);
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
