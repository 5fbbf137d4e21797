/**
 * `berth generate` against a fake OpenAI-compatible server on 127.0.0.1 that
 * replays recorded answers, then `berth eval` on what it wrote.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../src/functional/evaluate.ts';
import { readProblems } from '../../src/functional/formats.ts';
import { generate } from '../../src/functional/generate.ts';
import { detectSandbox } from '../../src/functional/sandbox.ts';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'functional');
const recorded = JSON.parse(readFileSync(join(fixtures, 'recorded-answers.json'), 'utf8')) as {
  completions: Record<string, unknown>;
  chat: Record<string, unknown>;
};

async function body(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

describe('berth generate against a local OpenAI-compatible server', () => {
  let server: Server;
  let baseUrl = '';
  const requests: { path: string; body: Record<string, unknown> }[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-generate-'));
    const kotlin = await readProblems(join(fixtures, 'kotlin-humaneval-2.jsonl'));
    const python = await readProblems(join(fixtures, 'humaneval-2.jsonl'));
    const byPrompt = new Map<string, string>();
    for (const problem of [...kotlin.values(), ...python.values()])
      byPrompt.set(problem.prompt, problem.task_id);
    server = createServer(async (request, response) => {
      const parsed = await body(request);
      requests.push({ path: request.url ?? '', body: parsed });
      let answer: unknown;
      if (request.url === '/v1/completions') {
        answer = recorded.completions[byPrompt.get(parsed.prompt as string) ?? ''];
      } else if (request.url === '/v1/chat/completions') {
        const messages = parsed.messages as { role: string; content: string }[];
        answer = recorded.chat[byPrompt.get(messages.at(-1)?.content ?? '') ?? ''];
      }
      if (!answer) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'no recorded answer' } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('post-processes completions as Kotlin HumanEval does, each step on request', async () => {
    const problems = await readProblems(join(fixtures, 'kotlin-humaneval-2.jsonl'));
    const out = join(dir, 'kotlin.jsonl');
    const samples = await generate({
      problems,
      model: 'codellama-7b-kexer',
      baseUrl,
      chat: false,
      numSamples: 1,
      temperature: 0.1,
      maxTokens: 256,
      stop: ['\n}\n'],
      concurrency: 2,
      timeoutSec: 10,
      postprocess: { stopAt: ['\n}\n'], stripComments: true, dropSignature: true },
      out,
    });
    const sent = requests.filter((request) => request.path === '/v1/completions');
    expect(sent).toHaveLength(2);
    expect(sent[0]?.body).toMatchObject({
      model: 'codellama-7b-kexer',
      temperature: 0.1,
      max_tokens: 256,
      stop: ['\n}\n'],
    });
    const first = samples.find((sample) => sample.task_id === 'HumanEval_kotlin/0');
    // Cut after the first "\n}\n" (the helper main is gone), comments removed.
    expect(first?.completion).not.toContain('fun main');
    expect(first?.completion).not.toContain('//');
    expect(first?.completion).not.toContain('/*');
    expect(first?.completion.endsWith('return false\n}\n')).toBe(true);
    expect(first?.raw_generation).toContain('fun main');
    expect(first?.language).toBe('kotlin');
    // The written file is a samples file berth eval (and mxeval) reads.
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => row.task_id)).toEqual(['HumanEval_kotlin/0', 'HumanEval_kotlin/1']);
  });

  it('berth generate --kotlin-humaneval-postprocess, and its old name --seed-postprocess, turn on all three steps', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'berth.js');
    const problems = join(fixtures, 'kotlin-humaneval-2.jsonl');
    const written: Record<string, { completion: string; raw_generation: string }[]> = {};
    for (const flag of ['--kotlin-humaneval-postprocess', '--seed-postprocess', '']) {
      const out = join(dir, `cli${flag || '-none'}.jsonl`);
      const args = [
        bin,
        'generate',
        '--problems',
        problems,
        '--model',
        'm',
        '--base-url',
        baseUrl,
        '-o',
        out,
      ];
      await promisify(execFile)('node', flag ? [...args, flag] : args, { env: { ...process.env, CI: '1' } });
      written[flag] = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    }
    const processed = written['--kotlin-humaneval-postprocess']?.[0];
    expect(processed?.raw_generation).toContain('fun main');
    expect(processed?.completion).not.toContain('fun main');
    expect(processed?.completion).not.toContain('//');
    expect(processed?.completion.endsWith('return false\n}\n')).toBe(true);
    expect(written['--seed-postprocess']).toEqual(written['--kotlin-humaneval-postprocess']);
    expect(written['']?.[0]?.completion).toBe(written['']?.[0]?.raw_generation);
    const help = await promisify(execFile)('node', [bin, 'generate', '--help']);
    expect(help.stdout).toContain('--kotlin-humaneval-postprocess');
    expect(help.stdout).not.toContain('--seed-postprocess');
  });

  it('without the steps the raw text is kept', async () => {
    const problems = await readProblems(join(fixtures, 'kotlin-humaneval-2.jsonl'));
    const samples = await generate({
      problems,
      model: 'm',
      baseUrl,
      chat: false,
      numSamples: 2,
      temperature: 0.8,
      maxTokens: 64,
      stop: [],
      concurrency: 1,
      timeoutSec: 10,
      postprocess: {},
      out: join(dir, 'raw.jsonl'),
    });
    expect(samples).toHaveLength(4);
    expect(samples[0]?.completion).toBe(samples[0]?.raw_generation);
    expect(samples[0]?.completion).toContain('// compare every pair');
  });

  it('a chat answer: code extracted and the repeated signature dropped', async () => {
    const problems = await readProblems(join(fixtures, 'kotlin-humaneval-2.jsonl'));
    const samples = await generate({
      problems,
      model: 'm',
      baseUrl,
      chat: true,
      system: 'Complete the function.',
      numSamples: 1,
      temperature: 0,
      maxTokens: 128,
      stop: [],
      concurrency: 1,
      timeoutSec: 10,
      postprocess: { extractCode: true, dropSignature: true },
      out: join(dir, 'chat.jsonl'),
      limit: 1,
    });
    const chat = requests.filter((request) => request.path === '/v1/chat/completions');
    expect(chat[0]?.body.messages).toEqual([
      { role: 'system', content: 'Complete the function.' },
      { role: 'user', content: problems.get('HumanEval_kotlin/0')?.prompt },
    ]);
    // The seed keeps the lines after the first `fun ` line of prompt + answer: the prompt's signature,
    // so the answer's own repeated signature line stays; it is the model's text, unchanged otherwise.
    expect(samples[0]?.completion.startsWith('fun hasCloseElements')).toBe(true);
    expect(samples[0]?.completion).not.toContain('```');
  });

  it.skipIf(detectSandbox().kind === 'none')(
    'generated Python samples evaluate: one right, one wrong',
    async () => {
      const problemsFile = join(fixtures, 'humaneval-2.jsonl');
      const problems = await readProblems(problemsFile);
      const out = join(dir, 'python.jsonl');
      await generate({
        problems,
        model: 'm',
        baseUrl,
        chat: false,
        numSamples: 1,
        temperature: 0,
        maxTokens: 128,
        stop: ['\ndef'],
        concurrency: 2,
        timeoutSec: 10,
        postprocess: {},
        out,
      });
      const summary = await evaluate({ problemsFile, samplesFile: out, timeoutSec: 5, workers: 1 });
      expect(summary.passed).toBe(1);
      expect(summary.pass_at_k).toEqual({ 'pass@1': 0.5 });
      const results = readFileSync(`${out}_results.jsonl`, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(results.map((row) => row.passed)).toEqual([true, false]);
    },
  );

  it('a server error is reported, not written as a sample', async () => {
    const problems = await readProblems(join(fixtures, 'humaneval-2.jsonl'));
    await expect(
      generate({
        problems,
        model: 'm',
        baseUrl,
        chat: true,
        numSamples: 1,
        temperature: 0,
        maxTokens: 8,
        stop: [],
        concurrency: 1,
        timeoutSec: 5,
        postprocess: {},
        out: join(dir, 'missing.jsonl'),
      }),
    ).rejects.toThrow(/404|no recorded answer/);
  });

  it('an unreachable endpoint is bad input: exit 2 with the URL and the cause, no stack, not "a bug"', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'berth.js');
    const problems = join(fixtures, 'humaneval-2.jsonl');
    // A port nothing listens on (taken, then released).
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const cli = (url: string) =>
      promisify(execFile)(
        process.execPath,
        [
          bin,
          'generate',
          '--problems',
          problems,
          '--model',
          'm',
          '--base-url',
          url,
          '-o',
          join(dir, 'never.jsonl'),
        ],
        { encoding: 'utf8' },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    for (const [url, cause] of [
      [`http://127.0.0.1:${port}/v1`, /cannot connect: .*ECONNREFUSED 127\.0\.0\.1:\d+/],
      ['http://berth-no-such-host.invalid/v1', /cannot connect: .*berth-no-such-host\.invalid/],
      ['127.0.0.1:8000/v1', /"127\.0\.0\.1:8000\/v1" is not a URL|not an http\(s\) URL/],
      // The recorded server has no chat answers for these prompts: 404, the endpoint's fault.
      [`${baseUrl}/bad-route`, /HTTP 404/],
    ] as const) {
      const run = await cli(url);
      expect(run.code, url).toBe(2);
      if (!url.startsWith('127.0.0.1')) expect(run.stderr).toContain(`cannot use the endpoint ${url}`);
      expect(run.stderr).toMatch(cause);
      expect(run.stderr).not.toMatch(/bug in berth|internal error|\n\s+at /);
    }
    expect(existsSync(join(dir, 'never.jsonl'))).toBe(false);
  }, 120_000);
});
