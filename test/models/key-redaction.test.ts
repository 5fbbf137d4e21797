/**
 * Breaker finding 3: an upstream that echoes the real key it was sent, in a 200 (streamed or
 * not, the key split across network chunks) or in a 401 with the key JSON-escaped, must not get
 * it to the agent or into any file berth writes. One redaction rule (src/models/redact.ts) at
 * every exit of the gateway, in every protocol it serves, passed through and translated.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { FileResponseCache } from '../../src/models/cache.ts';
import { Credentials } from '../../src/models/credentials.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { PriceTable } from '../../src/models/pricing.ts';
import { type ModelTarget, resolveModel } from '../../src/models/providers.ts';
import { KeyRedactor } from '../../src/models/redact.ts';
import type { WireProtocol } from '../../src/models/types.ts';
import { bin, sample } from '../helpers/jobs.ts';
import { startScriptedModelServer } from '../helpers/scripted-model-server.ts';

const KEY = 'sk-BRKR-KEY-7777-a1b2c3d4';
const escaped = (key: string) => key.replace(/-/g, '\\u002d');
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** Every spelling of KEY a consumer decodes (what the tests look for in bytes and files). */
function leaks(text: string): string[] {
  const found: string[] = [];
  const check = (label: string, s: string) => {
    if (s.includes(KEY)) found.push(label);
  };
  check('raw', text);
  check(
    '\\u escapes',
    text.replace(/\\+u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16))),
  );
  check(
    'url-encoded',
    text.replace(/%(?:25)*([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16))),
  );
  for (const word of text.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? [])
    for (let skip = 0; skip < 4; skip++)
      check(
        'base64',
        Buffer.from(word.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'),
      );
  return found;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('KeyRedactor', () => {
  const redactor = new KeyRedactor([KEY, 'short']);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const spellings = [
    KEY,
    escaped(KEY),
    [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`).join(''),
    JSON.stringify(escaped(KEY)).slice(1, -1),
    encodeURIComponent(KEY).replace(/-/g, '%2D'),
    [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''),
    [...KEY].map((c) => `&#${c.charCodeAt(0)};`).join(''),
    b64(KEY),
    b64(`Bearer ${KEY}`),
    b64(`x-api-key: ${KEY}`),
    b64(`user:Bearer ${KEY}`),
    b64(`ab${KEY}zz`).replace(/\+/g, '-').replace(/\//g, '_'),
  ];

  it('redacts the key in every spelling a consumer decodes, and nothing else', () => {
    for (const spelling of spellings) {
      const out = redactor.text(`before ${spelling} after`);
      expect(out, spelling).toContain('***');
      expect(out.startsWith('before ')).toBe(true);
      expect(leaks(out), `${spelling} -> ${out}`).toEqual([]);
    }
    expect(redactor.text('nothing secret here, sk-other-key')).toBe('nothing secret here, sk-other-key');
    // A redacted JSON body is still JSON.
    const body = JSON.stringify({ error: { message: `bad key ${KEY}` } });
    expect(JSON.parse(redactor.text(body)).error.message).toBe('bad key ***');
    expect(redactor.value({ a: [`x${KEY}`], b: 1 })).toEqual({ a: ['x***'], b: 1 });
  });

  it('redacts a stream whatever its chunks, a key split anywhere', () => {
    const whole = spellings.map((s, i) => `data: {"n":${i},"t":"${s}"}\n\n`).join('');
    for (let size = 1; size <= 37; size += 3) {
      const stream = redactor.stream();
      let out = '';
      for (let i = 0; i < whole.length; i += size) out += stream.push(whole.slice(i, i + size));
      out += stream.end();
      expect(out).toBe(redactor.text(whole));
      expect(leaks(out)).toEqual([]);
    }
  });

  it('lets a complete event out at once (no hold-back past its blank line)', () => {
    const stream = redactor.stream();
    expect(stream.push('data: {"t":"hello"}\n\ndata: {"t":"sk-BR')).toBe('data: {"t":"hello"}\n\n');
    expect(stream.push('KR-KEY-7777-a1b2c3d4"}\n\n')).toBe('data: {"t":"***"}\n\n');
  });
});

/** Request bodies per protocol (what an agent sends). */
function request(protocol: WireProtocol, stream: boolean, prompt: string): { path: string; body: unknown } {
  const messages = [{ role: 'user', content: prompt }];
  switch (protocol) {
    case 'openai-chat':
      return { path: '/v1/chat/completions', body: { model: 'm', messages, stream } };
    case 'openai-responses':
      return { path: '/v1/responses', body: { model: 'm', input: prompt, stream } };
    case 'anthropic-messages':
      return { path: '/v1/messages', body: { model: 'm', max_tokens: 64, messages, stream } };
    default:
      return {
        path: `/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        body: { contents: [{ role: 'user', parts: [{ text: prompt }] }] },
      };
  }
}

const PROTOCOLS: WireProtocol[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'];
const targets = (url: string): Record<string, ModelTarget> => ({
  'openai-chat': resolveModel('openai/gpt-4o', {}, `${url}/v1`),
  'openai-responses': { ...resolveModel('openai/gpt-5', {}, `${url}/v1`), protocols: ['openai-responses'] },
  'anthropic-messages': resolveModel('anthropic/claude-sonnet-4-5', {}, url),
  gemini: resolveModel('gemini/gemini-2.5-flash', {}, url),
});

async function gatewayFor(dir: string) {
  const gateway = await ModelGateway.start({
    credentials: Credentials.of({ OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY, GEMINI_API_KEY: KEY }),
    prices: PriceTable.load(),
    retry: { maxRetries: 0, initialDelayMs: 10 },
    cache: new FileResponseCache(join(dir, 'cache')),
    socket: false,
  });
  cleanups.push(() => gateway.stop());
  return gateway;
}

async function call(
  gateway: ModelGateway,
  token: string,
  protocol: WireProtocol,
  stream: boolean,
  prompt = 'echo',
): Promise<{ status: number; text: string }> {
  const { path, body } = request(protocol, stream, prompt);
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-goog-api-key': token,
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fixkeys-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const label0 = (protocol: string, native: string, stream: boolean) =>
  `${protocol} -> ${native} stream=${stream}`;

describe('the gateway never hands on or records a key an upstream echoes', () => {
  it('a 200 that echoes the key, in every protocol, streamed and not, passed through and translated', async () => {
    // The scripted server's text holds the key as sent and JSON-escaped. Streamed, it comes in
    // 8-character deltas: no frame holds the key, the record (the joined text) is redacted.
    const upstream = await startScriptedModelServer((req) => {
      const sent = String(
        req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key'],
      );
      return { reply: { text: `auth=${sent} ${escaped(sent)}`.padEnd(2000, '.') } };
    });
    cleanups.push(() => upstream.close());
    const dir = tempDir();
    const gateway = await gatewayFor(dir);
    const events: unknown[] = [];
    let n = 0;
    for (const [native, target] of Object.entries(targets(upstream.url)))
      for (const protocol of PROTOCOLS)
        for (const stream of [false, true]) {
          if (protocol === 'openai-responses' && native !== 'openai-responses' && native !== 'openai-chat')
            continue;
          const session = gateway.openSession({
            trialName: `t${n++}`,
            model: target,
            recordFile: join(dir, 'model-calls.jsonl'),
            emit: (e) => events.push(e),
          });
          // The first call reaches the upstream, the same again comes from the cache.
          for (const round of [1, 2]) {
            const { status, text } = await call(gateway, session.token, protocol, stream, `echo ${n}`);
            const label = `${label0(protocol, native, stream)} round ${round}`;
            expect(status, `${label}: ${text.slice(0, 300)}`).toBe(200);
            if (!stream) expect(text, label).toContain('***');
            expect(leaks(text), label).toEqual([]);
          }
          expect(session.records[0]?.output?.text, label0(protocol, native, stream)).toMatch(
            /^auth=(Bearer )?\*\*\* (Bearer )?\*\*\*\.+$/,
          );
          await session.close();
        }
    expect(upstream.requests.length).toBe(n);
    expect(leaks(JSON.stringify(events))).toEqual([]);
    const files = filesUnder(dir);
    expect(files.some((f) => f.includes('cache'))).toBe(true);
    for (const file of files) expect(leaks(readFileSync(file, 'utf8')), file).toEqual([]);
    expect(readFileSync(join(dir, 'model-calls.jsonl'), 'utf8')).toContain('auth=Bearer ***');
  });

  /** A tiny upstream: a 200 SSE stream whose key is cut across network chunks, or a 401 with it escaped. */
  async function rawUpstream(mode: 'split-stream' | 'escaped-401'): Promise<string> {
    const server: Server = createServer(async (req, res) => {
      for await (const _ of req) {
        // read the request
      }
      const sent = String(
        req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key'],
      ).replace(/^Bearer /, '');
      if (mode === 'escaped-401') {
        const body = `{"error":{"message":"bad key ${escaped(sent)} (Bearer ${escaped(sent)})","type":"invalid_request_error"}}`;
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(body);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The key raw in one delta and with JSON-escaped dashes (decoding to the key) in the next.
      const frame = (content: string) =>
        `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
      const text = `${frame('auth=')}${frame(`Bearer ${sent}`)}${frame(` and ${escaped(sent)}`)}data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\ndata: [DONE]\n\n`;
      // Cut the bytes inside each spelling of the key, flushing between pieces.
      const cuts = [text.indexOf(sent) + 5, text.indexOf(escaped(sent)) + 9, text.length];
      let from = 0;
      for (const cut of cuts) {
        res.write(text.slice(from, cut));
        from = cut;
        await new Promise((r) => setTimeout(r, 30));
      }
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((r) => server.close(r)));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('a streamed 200 with the key split across network chunks, passed through and translated', async () => {
    const url = await rawUpstream('split-stream');
    const dir = tempDir();
    const gateway = await gatewayFor(dir);
    const target = targets(url)['openai-chat'] as ModelTarget;
    for (const protocol of PROTOCOLS) {
      const session = gateway.openSession({
        trialName: protocol,
        model: target,
        recordFile: join(dir, 'calls.jsonl'),
      });
      const { status, text } = await call(gateway, session.token, protocol, true);
      expect(status, text).toBe(200);
      expect(text, protocol).toContain('***');
      expect(leaks(text), `${protocol}: ${text}`).toEqual([]);
      await session.close();
    }
    for (const file of filesUnder(dir)) expect(leaks(readFileSync(file, 'utf8')), file).toEqual([]);
  });

  it('a 401 whose key is JSON-escaped, in every protocol', async () => {
    const url = await rawUpstream('escaped-401');
    const dir = tempDir();
    const gateway = await gatewayFor(dir);
    const events: unknown[] = [];
    for (const [native, target] of Object.entries(targets(url)))
      for (const protocol of PROTOCOLS)
        for (const stream of [false, true]) {
          const session = gateway.openSession({
            trialName: `${native}-${protocol}`,
            model: target,
            recordFile: join(dir, 'calls.jsonl'),
            emit: (e) => events.push(e),
          });
          const { status, text } = await call(gateway, session.token, protocol, stream);
          expect(status, text).toBe(401);
          expect(leaks(text), `${protocol} -> ${native}: ${text}`).toEqual([]);
          await session.close();
        }
    expect(leaks(JSON.stringify(events))).toEqual([]);
    const calls = readFileSync(join(dir, 'calls.jsonl'), 'utf8');
    expect(calls).toContain('bad key ***');
    expect(leaks(calls)).toEqual([]);
  });

  it('berth run: the key is in no file of the job folder and not in what the agent got (finding 3)', async () => {
    const url = await rawUpstream('split-stream');
    const echo401 = await rawUpstream('escaped-401');
    const dir = tempDir();
    // The agent asks the echoing upstream (streamed) and then one answering 401: two jobs.
    const agent = [
      'for s in true false; do',
      '  curl -sS -N "$BERTH_MODEL_GATEWAY/v1/chat/completions" -H "Authorization: Bearer $BERTH_MODEL_TOKEN" \\',
      `    -H 'content-type: application/json' -d '{"model":"m","stream":'$s',"messages":[{"role":"user","content":"hi"}]}'`,
      '  echo',
      'done',
    ].join('\n');
    for (const [name, base] of [
      ['echo-200', url],
      ['echo-401', echo401],
    ] as const) {
      const run = await execa(
        'node',
        [
          bin,
          'run',
          '-p',
          sample,
          '-i',
          'berth__durations-1',
          '-a',
          'command',
          '--agent-command',
          agent,
          '-m',
          'openai/gpt-4o-mini',
          '--model-base-url',
          `${base}/v1`,
          '--jobs-dir',
          dir,
          '--job-name',
          name,
        ],
        { reject: false, env: { ...process.env, CI: '1', OPENAI_API_KEY: KEY } },
      );
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).not.toBe(2);
      const files = filesUnder(join(dir, name));
      expect(files.some((f) => f.endsWith('model-calls.jsonl'))).toBe(true);
      for (const file of files) expect(leaks(readFileSync(file, 'latin1')), file).toEqual([]);
      const seen = files
        .filter((f) => /agent\/.*(stdout|log|txt)/.test(f))
        .map((f) => readFileSync(f, 'utf8'))
        .join('\n');
      expect(seen, 'the agent printed what it got').toContain(
        name === 'echo-200' ? 'Bearer ***' : 'bad key ***',
      );
      expect(leaks(`${run.stdout}${run.stderr}`)).toEqual([]);
    }
  }, 120_000);
});
