/**
 * A multi-step trial's model token lives for each step's agent phase only (issue 11), not in
 * the agent's set-up either: the agent of each step calls the model with it, leaves it in the
 * container, and that step's verifier (test.sh, in the same container, which has the gateway's socket mounted) tries
 * to call the model with it: refused. The next step's agent gets a new token that works.
 * Real Docker engine, the real gateway, the scripted model server upstream.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent, AgentContext, AgentResult, AgentSetupContext } from '../../src/agents/agent.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { Credentials } from '../../src/models/credentials.ts';
import { GATEWAY_SOCKET, type GatewaySession, ModelGateway } from '../../src/models/gateway.ts';
import { PriceTable } from '../../src/models/pricing.ts';
import { resolveModel } from '../../src/models/providers.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import { HarborVerifier } from '../../src/verifiers/harbor.ts';
import { type ScriptedModelServer, startScriptedModelServer } from '../helpers/scripted-model-server.ts';
import { fixtureImageMap, JOB_ID, skipDocker, tempDir, twoStepTask } from './helpers.ts';

/**
 * test.sh of each step: calls the gateway through its socket (mounted at /run/berth-gateway)
 * with the token the agent left in /app/token; reward 1 when the call is refused (401).
 */
const TEST_SH = `#!/bin/bash
python3 - <<'PY'
import json, socket
token = open("/app/token").read().strip()
body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "from the verifier"}]})
request = ("POST /v1/chat/completions HTTP/1.1\\r\\nHost: gateway\\r\\nAuthorization: Bearer " + token +
  "\\r\\nContent-Type: application/json\\r\\nContent-Length: " + str(len(body)) +
  "\\r\\nConnection: close\\r\\n\\r\\n" + body)
s = socket.socket(socket.AF_UNIX)
s.connect("/run/berth-gateway/${GATEWAY_SOCKET}")
s.sendall(request.encode())
answer = b""
while True:
    chunk = s.recv(65536)
    if not chunk: break
    answer += chunk
status = answer.split(b" ", 2)[1].decode()
open("/logs/verifier/gateway-status.txt", "w").write(status + "\\n")
open("/logs/verifier/reward.txt", "w").write("1" if status == "401" else "0")
PY
`;

/** Calls the model with the session's token (as an agent would), then leaves the token in /app/token. */
class TokenAgent implements Agent {
  readonly info = { name: 'token-agent', version: 'test' };
  readonly calls: { token: string; status: number }[] = [];
  setupCall: { token: string; status: number } | undefined;
  async setup(context: AgentSetupContext): Promise<void> {
    if (context.models) this.setupCall = await callModel(context.models, 'from the set-up');
  }
  async run(context: AgentContext): Promise<AgentResult> {
    if (!context.models) throw new Error('no model session');
    const call = await callModel(context.models, 'from the agent');
    this.calls.push(call);
    await context.environment.exec(`printf %s '${call.token}' > /app/token`);
    return {};
  }
}

async function callModel(session: GatewaySession, text: string): Promise<{ token: string; status: number }> {
  const token = session.token;
  const response = await fetch(`${session.gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: text }] }),
  });
  await response.text();
  return { token, status: response.status };
}

describe.skipIf(skipDocker)("a multi-step trial's model token", () => {
  let upstream: ScriptedModelServer;
  let gateway: ModelGateway;
  beforeAll(async () => {
    upstream = await startScriptedModelServer(() => ({ reply: { text: 'ok' } }));
    gateway = await ModelGateway.start({
      credentials: Credentials.of({ OPENAI_API_KEY: 'sk-test-multi-step' }),
      prices: PriceTable.load(),
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it("is refused to each step's verifier and the agent's set-up; each step's agent gets a new one that works", async () => {
    const agent = new TokenAgent();
    const trialDir = join(tempDir('berth-engine-gw-trial-'), 't__1');
    const r = await runTrialWith({
      task: loadHarborTask(
        twoStepTask({ 'steps/one/tests/test.sh': TEST_SH, 'steps/two/tests/test.sh': TEST_SH }),
      ),
      agent,
      attempt: 1,
      trialName: 't__1',
      trialDir,
      jobId: JOB_ID,
      source: 'test',
      providers: [new DockerEnvironmentProvider({ imageMap: fixtureImageMap() })],
      verifiers: [new HarborVerifier()],
      models: { gateway, target: resolveModel('openai/gpt-4o', {}, `${upstream.url}/v1`) },
    });
    // The agent's set-up (before any agent phase) was refused.
    expect(agent.setupCall?.status).toBe(401);
    // Each step's agent called the model with its own token, and got an answer.
    expect(agent.calls.map((c) => c.status)).toEqual([200, 200]);
    expect(agent.calls[0]?.token).not.toBe(agent.calls[1]?.token);
    // Each step's verifier was refused with the token its agent left behind.
    const statuses = readdirSync(trialDir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name === 'gateway-status.txt')
      .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8').trim());
    expect(statuses).toEqual(['401', '401']);
    expect(r.step_results?.map((s) => s.verifier_result?.rewards)).toEqual([{ reward: 1 }, { reward: 1 }]);
    expect(r.berth.status).toBe('resolved');
    // Only the agents' calls reached the model; both are counted.
    expect(upstream.requests).toHaveLength(2);
    expect(r.agent_result).toMatchObject({ n_input_tokens: 20, n_output_tokens: 10 });
  });
});
