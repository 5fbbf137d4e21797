/**
 * ATIF trajectories built from the gateway's records validate against Harbor's own
 * schema; deckhand's tools work on a real local environment; the response cache
 * replays a call for nothing; --env-file keys are read.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Ajv from 'ajv';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { keepWithin } from '../../src/agents/deckhand/deckhand.ts';
import { boundText, runTool } from '../../src/agents/deckhand/tools.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { FileResponseCache } from '../../src/models/cache.ts';
import { Credentials } from '../../src/models/credentials.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { PriceTable } from '../../src/models/pricing.ts';
import { resolveModel } from '../../src/models/providers.ts';
import { trajectoryFromRecords } from '../../src/models/trajectory.ts';
import type { Task } from '../../src/tasks/task.ts';
import { fixturesDir } from '../helpers/data.ts';
import { startScriptedModelServer } from '../helpers/scripted-model-server.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const validate = new Ajv({ strict: false, allErrors: true }).compile(
  JSON.parse(readFileSync(join(fixturesDir, 'atif', 'Trajectory.schema.json'), 'utf8')),
);

describe('trajectories from gateway records', () => {
  it('every call is an agent step, tool results its observation; the file validates against ATIF-v1.7', async () => {
    const server = await startScriptedModelServer([
      {
        reply: {
          text: 'Looking.',
          reasoning: 'ls first',
          toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'ls' } }],
          usage: { input: 50, output: 7, cached: 10 },
        },
      },
      { reply: { text: 'Done.', usage: { input: 80, output: 3 } } },
    ]);
    const gateway = await ModelGateway.start({ credentials: Credentials.of({}), prices: PriceTable.load() });
    try {
      const session = gateway.openSession({
        trialName: 't',
        model: resolveModel('hosted_vllm/m', {}, `${server.url}/v1`),
      });
      const client = new OpenAI({ baseURL: session.endpoints().openai, apiKey: session.token });
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'task' },
      ];
      const first = await client.chat.completions.create({ model: 'm', messages });
      messages.push(first.choices[0]?.message as OpenAI.ChatCompletionMessageParam, {
        role: 'tool',
        tool_call_id: 'c1',
        content: 'a.txt',
      });
      await client.chat.completions.create({ model: 'm', messages });
      await session.close();
      const trajectory = trajectoryFromRecords(session.records, { name: 'command', version: '1' }, 't');
      expect(validate(trajectory), JSON.stringify(validate.errors)).toBe(true);
      expect(trajectory.steps.map((s) => s.source)).toEqual(['system', 'user', 'agent', 'agent']);
      expect(trajectory.steps[2]).toMatchObject({
        message: 'Looking.',
        reasoning_content: 'ls first',
        tool_calls: [{ tool_call_id: 'c1', function_name: 'bash', arguments: { command: 'ls' } }],
        observation: { results: [{ source_call_id: 'c1', content: 'a.txt' }] },
        metrics: { prompt_tokens: 50, completion_tokens: 7, cached_tokens: 10, cost_usd: null },
      });
      expect(trajectory.final_metrics).toMatchObject({
        total_prompt_tokens: 130,
        total_completion_tokens: 10,
        total_cost_usd: null,
        total_steps: 4,
      });
    } finally {
      await gateway.stop();
      await server.close();
    }
  });
});

describe('the response cache', () => {
  it('answers a repeated request from the cache, streamed or not, at no cost', async () => {
    const server = await startScriptedModelServer([
      { reply: { text: 'cached answer', usage: { input: 1_000_000, output: 0 } } },
    ]);
    const dir = await temp.make('berth-cache-');
    const gateway = await ModelGateway.start({
      credentials: Credentials.of({ OPENAI_API_KEY: 'k' }),
      prices: PriceTable.load(),
      cache: new FileResponseCache(dir),
    });
    try {
      const session = gateway.openSession({
        trialName: 't',
        model: resolveModel('openai/gpt-4o', {}, `${server.url}/v1`),
      });
      const client = new OpenAI({ baseURL: session.endpoints().openai, apiKey: session.token });
      const request = { model: 'x', messages: [{ role: 'user' as const, content: 'same question' }] };
      expect((await client.chat.completions.create(request)).choices[0]?.message.content).toBe(
        'cached answer',
      );
      expect((await client.chat.completions.create(request)).choices[0]?.message.content).toBe(
        'cached answer',
      );
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ ...request, stream: true }))
        streamed += chunk.choices[0]?.delta.content ?? '';
      expect(streamed).toBe('cached answer');
      expect(server.requests).toHaveLength(1);
      expect(session.records.map((r) => r.route)).toEqual(['passthrough', 'cache', 'cache']);
      expect(session.totals().costUsd).toBeCloseTo(2.5, 9);
    } finally {
      await gateway.stop();
      await server.close();
    }
  });
});

describe('keys from --env-file', () => {
  it('reads a dotenv file over the environment; a missing file is an input error naming it', async () => {
    const dir = await temp.make('berth-env-');
    const file = join(dir, 'keys.env');
    await writeFile(file, '# keys\nOPENAI_API_KEY="sk-from-file"\nexport ANTHROPIC_API_KEY=sk-ant\n');
    const credentials = Credentials.load(file, { OPENAI_API_KEY: 'sk-from-env' });
    expect(credentials.keyFor(resolveModel('openai/gpt-5', {}))).toBe('sk-from-file');
    expect(() => Credentials.load(join(dir, 'missing.env'))).toThrow(
      /missing\.env.*cannot read the env file/,
    );
  });
});

describe("deckhand's tools and context", () => {
  it('bash, edit view/create/str_replace/insert and finish work in a real local environment', async () => {
    const provider = new LocalEnvironmentProvider();
    const task = {
      name: 'tools',
      origin: { file: 'x' },
      environment: {
        kind: 'local',
        snapshot: { files: { 'a.py': 'def f():\n    return 1\n', 'b.txt': 'x\nx\n' } },
      },
    } as unknown as Task;
    const environment = await provider.start({
      task,
      jobId: 'deckhand-tools',
      trialDir: await temp.make('berth-tools-'),
    });
    const context = { environment, secondsLeft: () => 60, maxObservationChars: 2000 };
    try {
      expect((await runTool('bash', { command: 'echo hi; exit 3' }, context)).content).toBe(
        'hi\n[exit code 3]',
      );
      expect((await runTool('edit', { command: 'view', path: 'a.py' }, context)).content).toContain(
        '     2\t    return 1',
      );
      const replaced = await runTool(
        'edit',
        { command: 'str_replace', path: 'a.py', old_str: 'return 1', new_str: 'return 2' },
        context,
      );
      expect(replaced.isError).toBe(false);
      expect((await runTool('bash', { command: 'cat a.py' }, context)).content).toContain('return 2');
      expect(
        (
          await runTool(
            'edit',
            { command: 'str_replace', path: 'b.txt', old_str: 'x', new_str: 'y' },
            context,
          )
        ).content,
      ).toContain('occurs 2 times');
      expect(
        (
          await runTool(
            'edit',
            { command: 'str_replace', path: 'a.py', old_str: 'nope', new_str: 'y' },
            context,
          )
        ).isError,
      ).toBe(true);
      await runTool(
        'edit',
        { command: 'create', path: 'pkg/new.py', file_text: "print('$HOME `x`')\n" },
        context,
      );
      expect((await runTool('bash', { command: 'cat pkg/new.py' }, context)).content).toContain(
        "print('$HOME `x`')",
      );
      await runTool('edit', { command: 'insert', path: 'a.py', insert_line: 0, new_str: '# top' }, context);
      expect((await runTool('bash', { command: 'head -1 a.py' }, context)).content).toContain('# top');
      expect((await runTool('edit', { command: 'view', path: '.' }, context)).content).toContain(
        'pkg/new.py',
      );
      expect((await runTool('finish', { summary: 's' }, context)).finished).toBe(true);
      expect((await runTool('nope', {}, context)).isError).toBe(true);
      const long = await runTool('bash', { command: 'seq 1 5000' }, context);
      expect(long.cut).toBeGreaterThan(0);
      expect(long.content).toContain('characters cut by berth');
      expect(long.content.length).toBeLessThan(2200);
    } finally {
      await environment.stop();
    }
  });

  it('boundText keeps head and tail; keepWithin replaces the oldest observations by a note', () => {
    expect(boundText('abc', 10)).toEqual({ text: 'abc', cut: 0 });
    const bounded = boundText('x'.repeat(100), 20);
    expect(bounded.cut).toBe(80);
    const big = 'o'.repeat(1000);
    const prompt = [
      { role: 'system' as const, content: 's' },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'task' }] },
      ...[1, 2, 3].flatMap((i) => [
        {
          role: 'assistant' as const,
          content: [{ type: 'tool-call' as const, toolCallId: `c${i}`, toolName: 'bash', input: '{}' }],
        },
        {
          role: 'tool' as const,
          content: [
            {
              type: 'tool-result' as const,
              toolCallId: `c${i}`,
              toolName: 'bash',
              output: { type: 'text' as const, value: big },
            },
          ],
        },
      ]),
    ];
    expect(keepWithin(prompt, 2000)).toBe(2);
    expect(JSON.stringify(prompt[3])).toContain('observation removed by berth');
    expect(JSON.stringify(prompt.at(-1))).toContain(big);
  });
});
