/**
 * How an agent inside an environment reaches the trial's gateway session.
 *
 * The gateway listens on 127.0.0.1 and on a Unix socket in a folder of its own
 * (`gateway.sock`, with two small relay programs beside it). An agent that runs
 * inside an environment gets:
 *
 * - **a local environment without a sandbox** (the host's network): the gateway's own
 *   address, `http://127.0.0.1:PORT`;
 * - **a local sandbox** (bubblewrap / unshare: its own, empty network namespace) and
 *   **a container** (whatever its network: `public`, `allowlist`, `no-network`): the
 *   socket's folder, bound read-only into the sandbox at the same path or mounted at
 *   `/run/berth-gateway` in the container, and a relay started in front of the agent
 *   that listens on `127.0.0.1:RELAY_PORT` inside the environment and passes each
 *   connection to the socket. The agent's base URLs name that address.
 *
 * So a `no-network` environment reaches the gateway and nothing else: no network
 * interface is added, no route out exists; the socket leads to the gateway only,
 * which answers only to the trial's token. The relay runs with Node (the installed
 * agents bring one) or Python 3; an environment with neither cannot reach the
 * gateway, and the agent command says so.
 */
import { createHash } from 'node:crypto';
import type { AgentContext } from '../agents/agent.ts';
import type { ModelEndpoint } from '../agents/installed/recipes.ts';
import type { NetworkPolicy } from '../tasks/task.ts';
import { shellQuote } from '../util/shell.ts';
import { GATEWAY_SOCKET, type GatewaySession } from './gateway.ts';

/** How an agent command reaches the gateway from its environment. */
export interface GatewayAccess {
  /** `http://HOST:PORT` of the gateway as the agent sees it. */
  origin: string;
  /** Shell lines run before the agent (start the relay, wait for it); '' when none is needed. */
  prelude: string;
  /** Host folders the command must see (the local sandbox). */
  binds: { path: string; writable?: boolean }[];
  /** The network the agent command needs: none when the relay carries its model calls. */
  network?: NetworkPolicy;
}

/** The port the relay listens on inside the environment: fixed per trial (from its token), 20000-59999. */
export function relayPort(session: GatewaySession): number {
  const digest = createHash('sha256').update(session.token).digest();
  return 20000 + (digest.readUInt32BE(0) % 40000);
}

/**
 * Shell lines that start the relay in the background (Node if the environment has it, else
 * Python 3), stop it when the shell exits, and wait until it listens (at most 10 s). Exit 97
 * with a message when it cannot start.
 */
export function relayPrelude(gatewayDir: string, port: number): string {
  const dir = shellQuote(gatewayDir);
  return [
    `berth_gw_ready="\${TMPDIR:-/tmp}/.berth-relay-${port}-$$"`,
    'rm -f "$berth_gw_ready"',
    'berth_gw_node=',
    'for berth_gw_c in "$BERTH_AGENT_HOME"/node_modules/node-linux-*/bin/node "$(command -v node 2>/dev/null)" "$(command -v nodejs 2>/dev/null)"; do',
    '  if [ -n "$berth_gw_c" ] && [ -x "$berth_gw_c" ] && "$berth_gw_c" -e 0 >/dev/null 2>&1; then berth_gw_node=$berth_gw_c; break; fi',
    'done',
    'if [ -n "$berth_gw_node" ]; then',
    `  "$berth_gw_node" ${dir}/relay.cjs 127.0.0.1:${port} ${dir}/${GATEWAY_SOCKET} "$berth_gw_ready" &`,
    'elif command -v python3 >/dev/null 2>&1; then',
    `  python3 ${dir}/relay.py 127.0.0.1:${port} ${dir}/${GATEWAY_SOCKET} "$berth_gw_ready" &`,
    'else',
    `  echo "berth: this environment has neither node nor python3 to run the model gateway relay" >&2; exit 97`,
    'fi',
    'berth_gw_pid=$!',
    `trap 'kill $berth_gw_pid 2>/dev/null; rm -f "$berth_gw_ready"' EXIT`,
    'berth_gw_i=0',
    'while [ ! -f "$berth_gw_ready" ] && [ $berth_gw_i -lt 100 ]; do sleep 0.1; berth_gw_i=$((berth_gw_i + 1)); done',
    '[ -f "$berth_gw_ready" ] || { echo "berth: the model gateway relay did not start" >&2; exit 97; }',
  ].join('\n');
}

/**
 * How the agent of `context` reaches the gateway, or undefined when the trial has no model.
 * @throws Error when the environment can reach no gateway (a container without the mount)
 */
export function gatewayAccess(context: AgentContext): GatewayAccess | undefined {
  const session = context.models;
  if (!session) return undefined;
  const { environment } = context;
  if (environment.kind === 'local' && !environment.isolated)
    return { origin: session.gatewayUrl, prelude: '', binds: [] };
  const port = relayPort(session);
  const origin = `http://127.0.0.1:${port}`;
  if (environment.kind === 'local') {
    const dir = session.gatewayDir;
    if (!dir) return { origin: session.gatewayUrl, prelude: '', binds: [], network: { mode: 'public' } };
    return {
      origin,
      prelude: relayPrelude(dir, port),
      binds: [{ path: dir }],
      network: { mode: 'no-network' },
    };
  }
  const dir = environment.modelGatewayDir;
  if (!dir)
    throw new Error(
      `the ${environment.kind} environment did not mount the model gateway's folder: its agent cannot reach a model`,
    );
  return { origin, prelude: relayPrelude(dir, port), binds: [] };
}

/**
 * The trial's gateway session as an installed agent's endpoint (its origin on the host, the
 * token, the model name), or undefined when the trial has no model. Inside the environment
 * the agent uses `gatewayAccess(context).origin` (the relay).
 */
export function modelEndpointFor(context: AgentContext): ModelEndpoint | undefined {
  const session = context.models;
  if (!session) return undefined;
  return { origin: session.gatewayUrl, token: session.token, model: session.model.name };
}
