/**
 * docker-compose sidecars on the real engine (issue 19): a `main` service plus an MCP server
 * sidecar on the trial's private network (test/fixtures/task-fields/mcp-sidecar, the shape of
 * Harbor's hello-mcp), started and removed with the trial through the Docker API; the task's
 * `[[environment.mcp_servers]]` handed to a real Claude Code, which calls the tool.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { InstalledAgent } from '../../src/agents/installed/agent.ts';
import { AGENT_PACKAGES } from '../../src/agents/installed/packages.ts';
import { NopAgent } from '../../src/agents/nop.ts';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { LABELS } from '../../src/environments/docker/labels.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { modelEndpointFor } from '../../src/models/access.ts';
import { Credentials } from '../../src/models/credentials.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { PriceTable } from '../../src/models/pricing.ts';
import { resolveModel } from '../../src/models/providers.ts';
import type { TrialModels } from '../../src/models/trial-models.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import type { ExtendedTrialResult } from '../../src/trials/record.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import { HarborVerifier } from '../../src/verifiers/harbor.ts';
import type { ReceivedRequest, ScriptStep } from '../helpers/scripted-model-server.ts';
import { startScriptedModelServer } from '../helpers/scripted-model-server.ts';
import { fixtureImageMap, JOB_ID, ShellAgent, skipDocker, tempDir } from './helpers.ts';

const TASK = join(import.meta.dirname, '..', 'fixtures', 'task-fields', 'mcp-sidecar');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function trial(
  agent: Agent,
  name: string,
  models?: TrialModels,
): Promise<{ r: ExtendedTrialResult; dir: string }> {
  const dir = tempDir('berth-sidecar-');
  const trialDir = join(dir, name);
  const r = (await runTrialWith({
    task: loadHarborTask(TASK),
    agent,
    attempt: 1,
    trialName: name,
    trialDir,
    jobId: JOB_ID,
    source: 'test',
    providers: [new DockerEnvironmentProvider({ imageMap: fixtureImageMap() })],
    verifiers: [new HarborVerifier()],
    ...(models ? { models } : {}),
  })) as ExtendedTrialResult;
  return { r, dir: trialDir };
}

/** What the engine still holds of a trial: containers and networks labelled with its name. */
async function leftovers(trialName: string): Promise<number> {
  const { docker } = await connectDocker();
  const filters = { label: [`${LABELS.trial}=${trialName}`] };
  const containers = await docker.listContainers({ all: true, filters });
  const networks = await docker.listNetworks({ filters });
  return containers.length + networks.length;
}

describe.skipIf(skipDocker)('docker-compose sidecars (real engine)', () => {
  it("halt pauses the task's sidecars with the trial's container", async () => {
    const trialDir = join(tempDir('berth-sidecar-halt-'), 'halt-sidecars');
    const env = await new DockerEnvironmentProvider({ imageMap: fixtureImageMap() }).start({
      task: loadHarborTask(TASK),
      jobId: JOB_ID,
      trialDir,
    });
    cleanups.push(() => env.stop());
    const states = async () => {
      const { docker } = await connectDocker();
      const filters = { label: [`${LABELS.trial}=halt-sidecars`] };
      return (await docker.listContainers({ all: true, filters })).map((c) => c.State).sort();
    };
    const before = await states();
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(before.every((state) => state === 'running')).toBe(true);
    await env.halt?.();
    expect(await states()).toEqual(before.map(() => 'paused'));
    await env.stop();
    expect(await leftovers('halt-sidecars')).toBe(0);
  });

  it('oracle: the sidecar starts healthy before main, answers over MCP, and is removed with the trial', async () => {
    const { r, dir } = await trial(new ScriptOracleAgent(), 'sidecar-oracle');
    expect(r.exception_info, JSON.stringify(r.exception_info)).toBeNull();
    expect(r.verifier_result?.rewards.reward, JSON.stringify(r.berth.tampering)).toBe(1);
    expect(readFileSync(join(dir, 'services', 'secrets.log'), 'utf8')).toContain('POST /mcp');
    expect(await leftovers('sidecar-oracle')).toBe(0);
  });

  it('nop gets 0: the secret is drawn by the sidecar, not written anywhere in the task', async () => {
    const { r } = await trial(new NopAgent(), 'sidecar-nop');
    expect(r.verifier_result?.rewards.reward).toBe(0);
    expect(await leftovers('sidecar-nop')).toBe(0);
  });

  it('hostile agent: the private network reaches the task’s services and nothing else', async () => {
    const host = createServer((s) => {
      s.on('error', () => undefined);
      s.end('host reached\n');
    });
    await new Promise<void>((r) => host.listen(0, '0.0.0.0', r));
    const port = (host.address() as { port: number }).port;
    cleanups.push(() => new Promise((r) => host.close(() => r())));
    const probe = (target: string) =>
      `python3 -c "import socket; socket.create_connection(('${target}', ${port}), 3); print('open')" 2>/dev/null || echo closed`;
    const agent = new ShellAgent(
      [
        'gw=$(ip route 2>/dev/null | awk "/default/ {print \\$3}")',
        `echo "sidecar: $(python3 -c "import socket; socket.create_connection(('secrets', 8000), 3); print('open')" 2>/dev/null || echo closed)" > /logs/agent/probe.txt`,
        `echo "docker0: $(${probe('172.17.0.1')})" >> /logs/agent/probe.txt`,
        // The private network's own gateway address is the host's side of it.
        `net_gw=$(python3 -c "import socket; a=socket.gethostbyname('secrets').split('.'); print('.'.join(a[:3]+['1']))")`,
        `echo "network gateway: $(python3 -c "import socket; socket.create_connection(('$net_gw', ${port}), 3); print('open')" 2>/dev/null || echo closed)" >> /logs/agent/probe.txt`,
      ].join('\n'),
    );
    const { dir } = await trial(agent, 'sidecar-hostile');
    const probe_ = readFileSync(join(dir, 'agent', 'probe.txt'), 'utf8');
    expect(probe_).toContain('sidecar: open');
    expect(probe_).toContain('docker0: closed');
    expect(probe_).toContain('network gateway: closed');
    expect(await leftovers('sidecar-hostile')).toBe(0);
  });

  it('Claude Code (real CLI) is given the MCP server and calls its tool', async () => {
    let secretSeen = '';
    const script = (request: ReceivedRequest): ScriptStep => {
      const tools = (request.parsed.call.tools ?? []).map((t) => t.name);
      const mcpTool = tools.find((t) => t.startsWith('mcp__') && t.endsWith('get_secret'));
      const bash = tools.includes('Bash');
      const results = request.parsed.call.prompt.flatMap((m) =>
        m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : [],
      );
      const usage = { input: 100, output: 20 };
      if (!mcpTool || !bash) return { reply: { text: 'ok', usage } };
      if (results.length === 0)
        return {
          reply: {
            text: 'Calling the tool.',
            toolCalls: [{ id: 'call_0', name: mcpTool, input: {} }],
            usage,
          },
        };
      const found = /berth-mcp-secret-[0-9a-f]{16}/.exec(JSON.stringify(results))?.[0];
      if (results.length === 1 && found) {
        secretSeen = found;
        return {
          reply: {
            text: 'Writing it.',
            toolCalls: [
              { id: 'call_1', name: 'Bash', input: { command: `printf '%s' '${found}' > /app/secret.txt` } },
            ],
            usage,
          },
        };
      }
      return { reply: { text: 'Done.', usage } };
    };
    const upstream = await startScriptedModelServer(script);
    cleanups.push(() => upstream.close());
    const gateway = await ModelGateway.start({
      credentials: Credentials.of({ ANTHROPIC_API_KEY: 'sk-test-key' }),
      prices: PriceTable.load(),
      retry: { initialDelayMs: 50 },
    });
    cleanups.push(() => gateway.stop());
    const model = resolveModel('anthropic/claude-sonnet-4-5', {}, upstream.url);
    const agent = new InstalledAgent({
      name: 'claude-code',
      version: AGENT_PACKAGES['claude-code'].defaultVersion,
      model: model.id,
      endpoint: modelEndpointFor,
    });
    const { r, dir } = await trial(agent, 'sidecar-claude', { gateway, target: model });
    const log = (f: string) => {
      try {
        return readFileSync(join(dir, 'agent', ...f.split('/')), 'utf8');
      } catch {
        return '';
      }
    };
    expect(r.exception_info, log('command/stderr.txt').slice(-2000)).toBeFalsy();
    expect(secretSeen, log('command/stdout.txt').slice(0, 4000)).toMatch(/^berth-mcp-secret-/);
    expect(r.verifier_result?.rewards.reward, JSON.stringify(r.berth.tampering)).toBe(1);
    expect(JSON.parse(log('sessions/.claude.json') || '{}').mcpServers?.secrets).toEqual({
      type: 'http',
      url: 'http://secrets:8000/mcp',
    });
    expect(await leftovers('sidecar-claude')).toBe(0);
  });
});
