/**
 * How an agent inside an environment reaches the trial's gateway session: the
 * base URLs and token it is given (`ModelEndpoint`, what the installed agents'
 * recipes and the `command` agent put in the CLI's variables and config files).
 *
 * - A local environment whose agent command has the host's network (the `command`
 *   agent's default): the gateway's own address on 127.0.0.1.
 */
import type { AgentContext } from '../agents/agent.ts';
import type { ModelEndpoint } from '../agents/installed/recipes.ts';

/**
 * The endpoint of the trial's gateway session as the agent's environment sees it, or
 * undefined when the trial has no model.
 * @throws Error for an environment the gateway cannot be reached from
 */
export function modelEndpointFor(context: AgentContext): ModelEndpoint | undefined {
  const session = context.models;
  if (!session) return undefined;
  if (context.environment.kind !== 'local')
    throw new Error(
      `the model gateway cannot be reached from a ${context.environment.kind} environment by an agent inside it yet`,
    );
  return { endpoints: session.endpoints(), token: session.token, model: session.model.name };
}
