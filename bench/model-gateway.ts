/**
 * What the model gateway adds to a model call: the same request sent straight to the
 * scripted model server and through the gateway, interleaved, in the same run; the goal is
 * at most 5 ms per call (median). Routes: a passed-through chat completion (plain and
 * streamed) and an Anthropic Messages call translated to chat completions (streamed).
 * Run: npx tsx bench/model-gateway.ts [calls]
 */
import { Credentials } from '../src/models/credentials.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { PriceTable } from '../src/models/pricing.ts';
import { resolveModel } from '../src/models/providers.ts';
import { startScriptedModelServer } from '../test/helpers/scripted-model-server.ts';

const calls = Number(process.argv[2] ?? 200);
const reply = {
  reply: { text: 'The answer is forty-two, as everyone knows by now.', usage: { input: 500, output: 12 } },
};
const server = await startScriptedModelServer(() => reply);
const gateway = await ModelGateway.start({
  credentials: Credentials.of({ OPENAI_API_KEY: 'k' }),
  prices: PriceTable.load(),
});
const session = gateway.openSession({
  trialName: 'bench',
  model: resolveModel('openai/gpt-4o', {}, `${server.url}/v1`),
});
const messages = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'What is the answer?' },
];

async function call(url: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await response.text();
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return performance.now() - t0;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const routes = [
  {
    name: 'chat, passed through',
    direct: () =>
      call(`${server.url}/v1/chat/completions`, { model: 'm', messages }, { authorization: 'Bearer k' }),
    gateway: () =>
      call(
        `${gateway.url}/v1/chat/completions`,
        { model: 'm', messages },
        { authorization: `Bearer ${session.token}` },
      ),
  },
  {
    name: 'chat streamed, passed through',
    direct: () =>
      call(
        `${server.url}/v1/chat/completions`,
        { model: 'm', messages, stream: true },
        { authorization: 'Bearer k' },
      ),
    gateway: () =>
      call(
        `${gateway.url}/v1/chat/completions`,
        { model: 'm', messages, stream: true },
        { authorization: `Bearer ${session.token}` },
      ),
  },
  {
    name: 'Anthropic streamed, translated to chat',
    direct: () =>
      call(
        `${server.url}/v1/chat/completions`,
        { model: 'm', messages, stream: true },
        { authorization: 'Bearer k' },
      ),
    gateway: () =>
      call(
        `${gateway.url}/v1/messages`,
        {
          model: 'm',
          max_tokens: 100,
          system: 'You are a terse assistant.',
          messages: [messages[1]],
          stream: true,
        },
        { 'x-api-key': session.token },
      ),
  },
];

for (const route of routes) {
  for (let i = 0; i < 20; i++) {
    await route.direct();
    await route.gateway();
  }
  const direct: number[] = [];
  const through: number[] = [];
  for (let i = 0; i < calls; i++) {
    direct.push(await route.direct());
    through.push(await route.gateway());
  }
  // CPU time per call (user + system, this process: client, gateway and server alike), which
  // a loaded machine does not inflate as it does wall time.
  const cpu = async (f: () => Promise<number>) => {
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) await f();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / calls;
  };
  const cpuDirect = await cpu(route.direct);
  const cpuGateway = await cpu(route.gateway);
  const d = median(direct);
  const g = median(through);
  console.log(
    `${route.name.padEnd(40)} wall: direct ${d.toFixed(2)} ms, through the gateway ${g.toFixed(2)} ms, +${(g - d).toFixed(2)} ms (median of ${calls}); CPU: +${(cpuGateway - cpuDirect).toFixed(2)} ms per call (goal <= 5 ms)`,
  );
}
await session.close();
await gateway.stop();
await server.close();
