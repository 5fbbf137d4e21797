/**
 * A scripted model server for tests: a real HTTP server on 127.0.0.1 that
 * speaks OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and
 * Gemini (streamed and not, as each vendor streams) and answers each request
 * with the next step of a script: a reply (text, reasoning, tool calls, usage,
 * an OpenRouter-style cost), an error status (429 with Retry-After, 500), a
 * malformed body, a context-length error, or a slow stream. Every request it
 * got is kept (path, headers, body) for assertions.
 *
 * Answers are written by berth's own protocol codecs (src/models/protocols/);
 * the gateway tests check those against the vendors' SDKs (openai,
 * @anthropic-ai/sdk, @google/genai), so this server speaks what they parse.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LanguageModelV3Content } from '@ai-sdk/provider';
import { answerToParts } from '../../src/models/answer.ts';
import { routeOf } from '../../src/models/gateway.ts';
import { CODECS } from '../../src/models/protocols/index.ts';
import {
  type ModelAnswer,
  type ParsedRequest,
  usageToV3,
  type WireProtocol,
} from '../../src/models/types.ts';

export interface ScriptReply {
  text?: string;
  reasoning?: string;
  toolCalls?: Array<{ id?: string; name: string; input: unknown }>;
  /** Tokens the reply reports (default 10 in, 5 out). */
  usage?: { input: number; output: number; cached?: number; cacheWrite?: number; reasoning?: number };
  /** OpenRouter's `usage.cost` (chat protocol only). */
  cost?: number;
  finish?: 'stop' | 'length' | 'tool-calls';
}

export type ScriptStep =
  | { reply: ScriptReply }
  /** An error status, with `Retry-After` seconds when given; `echoKey` puts the request's key in the message. */
  | { status: number; retryAfter?: number; message?: string; echoKey?: boolean }
  /** 200 with a body that is not the protocol's JSON. */
  | { malformed: true }
  /** The vendor's error for a prompt longer than the context window. */
  | { contextLength: true }
  /** A reply whose stream sends one frame every `delayMs` (a non-streamed one waits `delayMs` first). */
  | { slow: { delayMs: number; reply: ScriptReply } };

export interface ReceivedRequest {
  protocol: WireProtocol;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  parsed: ParsedRequest;
}

export type Script = ScriptStep[] | ((request: ReceivedRequest, index: number) => ScriptStep);

export interface ScriptedModelServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: ReceivedRequest[];
  /** The most requests it was answering at once (each counted from its arrival to its connection's end). */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/** The answer a reply stands for. */
export function replyAnswer(reply: ScriptReply, index = 0): ModelAnswer {
  const content: LanguageModelV3Content[] = [];
  if (reply.reasoning) content.push({ type: 'reasoning', text: reply.reasoning });
  if (reply.text) content.push({ type: 'text', text: reply.text });
  (reply.toolCalls ?? []).forEach((call, i) => {
    content.push({
      type: 'tool-call',
      toolCallId: call.id ?? `call_${index}_${i}`,
      toolName: call.name,
      input: JSON.stringify(call.input ?? {}),
    });
  });
  const usage = reply.usage ?? { input: 10, output: 5 };
  const finish = reply.finish ?? ((reply.toolCalls ?? []).length > 0 ? 'tool-calls' : 'stop');
  return {
    content,
    finishReason: { unified: finish, raw: undefined },
    usage: usageToV3({
      inputTokens: usage.input,
      cachedTokens: usage.cached ?? 0,
      cacheWriteTokens: usage.cacheWrite ?? 0,
      outputTokens: usage.output,
      reasoningTokens: usage.reasoning ?? 0,
    }),
  };
}

function contextLengthError(protocol: WireProtocol): { status: number; body: unknown } {
  const message =
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.";
  if (protocol === 'anthropic-messages')
    return {
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 9000 tokens > 8192 maximum' },
      },
    };
  if (protocol === 'gemini')
    return {
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'The input token count (9000) exceeds the maximum number of tokens allowed (8192).',
          status: 'INVALID_ARGUMENT',
        },
      },
    };
  return {
    status: 400,
    body: {
      error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' },
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a scripted model server on 127.0.0.1, on `listenPort` (0, the default: any free port). */
export async function startScriptedModelServer(script: Script, listenPort = 0): Promise<ScriptedModelServer> {
  const requests: ReceivedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer(async (req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => {
      inFlight -= 1;
    });
    const url = new URL(req.url ?? '/', 'http://scripted');
    const route = routeOf(req.method ?? '', url.pathname);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no such endpoint ${url.pathname}` } }));
      return;
    }
    const codec = CODECS[route.protocol];
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    const parsed = codec.parseRequest(body, url);
    const received: ReceivedRequest = {
      protocol: route.protocol,
      path: url.pathname + url.search,
      headers: req.headers,
      body,
      parsed,
    };
    requests.push(received);
    const index = requests.length - 1;
    const step = typeof script === 'function' ? script(received, index) : script[index];
    const sendJson = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    if (!step)
      return sendJson(
        500,
        codec.errorBody(500, `scripted model server: the script has no step ${index + 1}`),
      );
    if ('status' in step)
      return sendJson(
        step.status,
        codec.errorBody(
          step.status,
          step.echoKey
            ? `Incorrect API key provided: ${String(req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key'])}`
            : (step.message ?? `scripted error ${step.status}`),
        ),
        step.retryAfter !== undefined ? { 'retry-after': String(step.retryAfter) } : {},
      );
    if ('malformed' in step) {
      res.writeHead(200, { 'content-type': parsed.stream ? 'text/event-stream' : 'application/json' });
      res.end(parsed.stream ? 'data: {"choices": [ {"delta": \n\n' : '{"id": "x", "choices": [ {');
      return;
    }
    if ('contextLength' in step) {
      const error = contextLengthError(route.protocol);
      return sendJson(error.status, error.body);
    }
    const reply = 'slow' in step ? step.slow.reply : step.reply;
    const delayMs = 'slow' in step ? step.slow.delayMs : 0;
    const answer = replyAnswer(reply, index);
    const model = parsed.requestedModel || 'scripted-model';
    if (!parsed.stream) {
      if (delayMs) await sleep(delayMs);
      const rendered = codec.renderAnswer(answer, model, parsed) as Record<string, unknown>;
      if (reply.cost !== undefined && route.protocol === 'openai-chat')
        (rendered.usage as Record<string, unknown>).cost = reply.cost;
      return sendJson(200, rendered);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const encoder = codec.streamEncoder(model, parsed);
    for (const part of answerToParts(answer, 8)) {
      const frames = encoder.part(part);
      if (!frames) continue;
      if (delayMs) await sleep(delayMs);
      if (res.destroyed) return;
      res.write(frames);
    }
    let end = encoder.end();
    if (reply.cost !== undefined && route.protocol === 'openai-chat')
      end = end.replace(/"usage":\{/, `"usage":{"cost":${reply.cost},`);
    res.end(end);
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
