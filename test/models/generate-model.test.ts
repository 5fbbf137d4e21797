/**
 * `berth generate` takes the same -m as `berth run` and calls the model through the
 * gateway: an Anthropic model answers chat prompts (translated), the key stays in berth,
 * tokens and cost are reported; text completions to a chat-only model are refused clearly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/data.ts';
import { startScriptedModelServer } from '../helpers/scripted-model-server.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const KEY = 'sk-ant-MARKER-77aa';

describe('berth generate -m', () => {
  it('anthropic/... with --chat goes through the gateway; --base-url stays an alias; completions need a server that serves them', async () => {
    const server = await startScriptedModelServer(() => ({
      reply: { text: '```python\n    return sorted(numbers)\n```', usage: { input: 120, output: 12 } },
    }));
    try {
      const dir = await temp.make('berth-generate-');
      const out = join(dir, 'samples.jsonl');
      const args = [
        'generate',
        '--problems',
        join(fixturesDir, 'functional', 'humaneval-2.jsonl'),
        '-l',
        '1',
      ];
      const run = await execa(
        'node',
        [
          bin,
          ...args,
          '-m',
          'anthropic/claude-sonnet-4-5',
          '--model-base-url',
          server.url,
          '--chat',
          '--extract-code',
          '-o',
          out,
        ],
        { reject: false, env: { ...process.env, CI: '1', ANTHROPIC_API_KEY: KEY } },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toContain('model: 1 call(s), 120 tokens in, 12 out; cost $0.0005');
      const sample = JSON.parse(readFileSync(out, 'utf8').trim());
      expect(sample.completion).toContain('return sorted(numbers)');
      expect(server.requests[0]?.protocol).toBe('anthropic-messages');
      expect(server.requests[0]?.headers['x-api-key']).toBe(KEY);
      expect(readFileSync(out, 'utf8')).not.toContain(KEY);

      const completions = await execa(
        'node',
        [bin, ...args, '-m', 'anthropic/claude-sonnet-4-5', '--base-url', server.url, '-o', out],
        { reject: false, env: { ...process.env, CI: '1', ANTHROPIC_API_KEY: KEY } },
      );
      expect(completions.exitCode).not.toBe(0);
      expect(completions.stderr).toContain('text completions (/v1/completions) can only be passed through');
    } finally {
      await server.close();
    }
  });

  it('keeps -n requests in flight through the gateway (a trial keeps 4)', async () => {
    const server = await startScriptedModelServer(() => ({
      slow: {
        delayMs: 150,
        reply: { text: '    return sorted(numbers)\n', usage: { input: 50, output: 8 } },
      },
    }));
    try {
      const dir = await temp.make('berth-generate-');
      const run = await execa(
        'node',
        [
          bin,
          'generate',
          '--problems',
          join(fixturesDir, 'functional', 'humaneval-2.jsonl'),
          '-l',
          '1',
          '--num-samples',
          '6',
          '-n',
          '6',
          '-m',
          'hosted_vllm/coder',
          '--model-base-url',
          `${server.url}/v1`,
          '-o',
          join(dir, 'samples.jsonl'),
        ],
        { reject: false, env: { ...process.env, CI: '1' } },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(server.requests).toHaveLength(6);
      // More than a trial's 4 at once (all 6 unless the machine is slow to send them).
      expect(server.maxInFlight).toBeGreaterThan(4);
    } finally {
      await server.close();
    }
  });
});
