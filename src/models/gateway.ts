/**
 * The model gateway: a local HTTP server a job starts and stops, the one road
 * every model call of berth takes. Agents (the built-in agent, installed CLI
 * agents in an environment) are pointed at it with a per-trial token as their
 * key; it forwards each call to the trial's model with the real key, which
 * never leaves this process.
 *
 * It speaks OpenAI Chat Completions (`POST /v1/chat/completions`), OpenAI
 * Responses (`POST /v1/responses`), Anthropic Messages (`POST /v1/messages`) and
 * Gemini (`POST /v1beta/models/{m}:generateContent` / `:streamGenerateContent`),
 * streamed and not. A call in the upstream's own protocol is passed through
 * (model and key replaced); any other is translated through the AI SDK's
 * provider for the upstream (see upstream.ts). The token is read from
 * `Authorization: Bearer`, `x-api-key`, `x-goog-api-key` or `?key=`.
 *
 * Per trial it records every call (a `ModelCallRecord`, from which a trajectory
 * can be built), counts tokens and cost, and enforces the trial's limits (calls,
 * tokens, cost); per job it counts the total cost and, past the job's budget,
 * refuses every further call (`budgetExhausted` tells the job to start no more
 * trials). A refused call gets HTTP 403 in the agent's protocol, which agents do
 * not retry. Calls in flight count against every limit from their start: each is
 * a turn when it starts and holds its worst case (input estimate plus output cap,
 * `GatewaySession.admit`) until its real usage replaces it, and at most
 * `maxCallsInFlight` calls of a trial run at once (docs/models.md, "Limits").
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { APICallError, type LanguageModelV3, type LanguageModelV3Message } from '@ai-sdk/provider';
import { createParser } from 'eventsource-parser';
import type { TrialEmit, TrialEventInput } from '../trials/events.ts';
import { ownedTempDir } from '../util/leftovers.ts';
import { AnswerAccumulator, answerToParts } from './answer.ts';
import type { ResponseCache } from './cache.ts';
import type { Credentials } from './credentials.ts';
import type { CostSource, PriceTable } from './pricing.ts';
import { roundUsd } from './pricing.ts';
import { geminiPath } from './protocols/gemini.ts';
import { CODECS } from './protocols/index.ts';
import type { ModelTarget } from './providers.ts';
import { KeyRedactor } from './redact.ts';
import { RELAY_NODE_SOURCE, RELAY_PYTHON_SOURCE } from './relay-source.ts';
import {
  addUsage,
  GatewayRequestError,
  type ModelAnswer,
  type ParsedRequest,
  type ProtocolCodec,
  type TokenUsage,
  usageFromV3,
  type WireProtocol,
  ZERO_USAGE,
} from './types.ts';
import {
  DEFAULT_RETRY,
  type FetchFunction,
  languageModel,
  passthroughBody,
  passthroughHeaders,
  passthroughUrl,
  type RetryPolicy,
  UpstreamError,
  withRetries,
} from './upstream.ts';

/**
 * Limits of one trial's model use (each optional). Every budget (turns, tokens, cost, and the
 * job's budget) counts the calls in flight from the moment they start: a call is one turn when
 * it starts, and holds its worst case (see `CallHold`) until it ends.
 */
export interface TrialLimits {
  /** Model calls (turns), counted when each starts. */
  maxTurns?: number;
  /** Input plus output tokens, summed over the trial's calls. */
  maxTokens?: number;
  /** USD, summed over the trial's calls (only enforceable when the model's cost is known). */
  maxCostUsd?: number;
  /**
   * Calls of the trial under way at once (default `DEFAULT_CALLS_IN_FLIGHT`); a call past it
   * waits until one ends. It bounds what calls in flight can spend past a budget when their
   * worst case cannot be held (a model of unknown price or output limit).
   */
  maxCallsInFlight?: number;
}

/** Calls of one trial under way at once unless `TrialLimits.maxCallsInFlight` says otherwise. */
export const DEFAULT_CALLS_IN_FLIGHT = 4;

/**
 * What a call in flight holds against the budgets, from its start to its end, when its real usage
 * replaces it: its input (the request's size, `estimateTokens`) and its output cap, in tokens and,
 * when the model's price is known, in USD (input at the dearest input price, cache writes
 * included). A call that sets no output cap gets one under a budget (`GatewaySession.admit`).
 */
interface CallHold {
  tokens: number;
  usd: number;
}

/**
 * The gateway's estimate of a request's input tokens before the upstream counts them: 4
 * characters a token over its messages and tools as JSON (an image or other file counts 1,600
 * tokens, about the most a vendor charges for one image). Also the answer of the token-counting
 * endpoints.
 */
export function estimateTokens(call: Pick<ParsedRequest['call'], 'prompt' | 'tools'>): number {
  let files = 0;
  const text = JSON.stringify(
    [call.prompt, call.tools ?? []],
    function (this: { type?: unknown }, key: string, value: unknown) {
      // A file part's data (base64, bytes or a URL) is not text the model reads.
      if (key === 'data' && this?.type === 'file') {
        files += 1;
        return '';
      }
      return value;
    },
  );
  return Math.ceil(text.length / 4) + files * FILE_TOKENS;
}

/** Input tokens `estimateTokens` counts for one file (image) part. */
const FILE_TOKENS = 1600;

/** One model call as the gateway records it (one line of `model-calls.jsonl`). */
export interface ModelCallRecord {
  type: 'model-call';
  trial: string;
  /** 1-based number of the call in its trial. */
  seq: number;
  /** ISO time the call arrived. */
  started_at: string;
  duration_ms: number;
  /** The protocol the agent spoke. */
  protocol: WireProtocol;
  /** How it reached the model. */
  route: 'passthrough' | 'translated' | 'cache' | 'refused';
  /** The trial's model (`-m`). */
  model: string;
  /** The model name the agent sent. */
  requested_model: string;
  stream: boolean;
  /** HTTP status the agent got. */
  status: number;
  error: string | null;
  /** Upstream attempts made (1 + retries). */
  attempts: number;
  usage: {
    input_tokens: number;
    cached_tokens: number;
    cache_write_tokens: number;
    output_tokens: number;
    reasoning_tokens: number;
  };
  cost_usd: number | null;
  cost_source: CostSource | null;
  /** The request's messages after the last assistant message (the new input of this turn). */
  input: LanguageModelV3Message[];
  /** How many messages the whole request held. */
  n_messages: number;
  tools: string[];
  output: {
    text: string;
    reasoning: string;
    tool_calls: Array<{ id: string; name: string; arguments: string }>;
    finish_reason: string;
  } | null;
  warnings: string[];
}

/** What one trial used. */
export interface SessionTotals {
  calls: number;
  usage: TokenUsage;
  /** USD, or null when some call's cost is unknown. */
  costUsd: number | null;
}

export interface SessionOptions {
  /** The trial's name (recorded with each call). */
  trialName: string;
  model: ModelTarget;
  limits?: TrialLimits;
  /** File each call's record is appended to (JSON lines). */
  recordFile?: string;
  /** Called with each call's record. */
  onCall?: (record: ModelCallRecord) => void;
  /** The trial's event stream: each call becomes a `model-call` event (src/trials/events.ts). */
  emit?: TrialEmit;
}

/** A call's record as the trial's `model-call` event. */
export function modelCallEvent(record: ModelCallRecord, provider: string): TrialEventInput {
  return {
    type: 'model-call',
    provider,
    model: record.model,
    protocol: record.protocol === 'gemini' ? 'gemini-generate-content' : record.protocol,
    input_tokens: record.usage.input_tokens,
    cached_tokens: record.usage.cached_tokens,
    output_tokens: record.usage.output_tokens,
    cost_usd: record.cost_usd,
    duration_sec: record.duration_ms / 1000,
    error: record.error,
  } as TrialEventInput;
}

/** A trial's key for the gateway: random, never a real key. */
function newToken(): string {
  return `berth-${randomBytes(24).toString('hex')}`;
}

/** One trial's access to the gateway. */
export class GatewaySession {
  private current = newToken();
  private suspended = false;
  /** Calls started (turns), counted when each starts. */
  calls = 0;
  /** What the trial's calls in flight hold (`CallHold`). */
  private readonly holds = new Set<CallHold>();
  private inFlight = 0;
  /** Calls waiting for one of the trial's `maxCallsInFlight` places, first come first served. */
  private readonly waiting: Array<() => void> = [];
  usage: TokenUsage = { ...ZERO_USAGE };
  private cost = 0;
  private costUnknown = false;
  private closed = false;
  private writing: Promise<void> = Promise.resolve();
  readonly records: ModelCallRecord[] = [];

  constructor(
    private readonly gateway: ModelGateway,
    readonly options: SessionOptions,
  ) {}

  get model(): ModelTarget {
    return this.options.model;
  }

  /**
   * The key the trial's agent uses now (never a real key). A session that was suspended and
   * resumed has a new one: the old key stays refused.
   */
  get token(): string {
    return this.current;
  }

  /**
   * Stops the current token working: calls with it are refused as an unknown token. The trial
   * engine suspends the session when each agent phase ends, so nothing that runs after the agent
   * (a verifier, a step's set-up) can call a model with a token the agent left behind.
   */
  suspend(): void {
    if (this.suspended || this.closed) return;
    this.suspended = true;
    this.gateway.forget(this);
  }

  /** Issues a new token for the next agent phase (a multi-step trial's next step); no-op unless suspended. */
  resume(): void {
    if (!this.suspended || this.closed) return;
    this.current = newToken();
    this.suspended = false;
    this.gateway.admit(this);
  }

  /** The gateway's folder on the host (Unix socket `gateway.sock`, relay programs), if it has one. */
  get gatewayDir(): string | undefined {
    return this.gateway.socketDir;
  }

  /** `http://HOST:PORT` of the gateway on the host. */
  get gatewayUrl(): string {
    return this.gateway.url;
  }

  /** What the trial used so far. */
  totals(): SessionTotals {
    return {
      calls: this.calls,
      usage: { ...this.usage },
      costUsd: this.costUnknown ? null : roundUsd(this.cost),
    };
  }

  /** Why a new call is refused, or undefined. */
  refusal(): string | undefined {
    if (this.closed) return 'the trial is over';
    if (this.suspended) return "the trial's agent phase is over";
    const budget = this.gateway.budgetRefusal();
    if (budget) return budget;
    const limits = this.options.limits ?? {};
    if (limits.maxTurns !== undefined && this.calls >= limits.maxTurns)
      return `the trial reached its limit of ${limits.maxTurns} model calls`;
    const tokens = this.usage.inputTokens + this.usage.outputTokens;
    if (limits.maxTokens !== undefined && tokens >= limits.maxTokens)
      return `the trial reached its limit of ${limits.maxTokens} tokens (used ${tokens})`;
    if (limits.maxCostUsd !== undefined && !this.costUnknown && this.cost >= limits.maxCostUsd)
      return `the trial reached its cost limit of $${limits.maxCostUsd} (used $${roundUsd(this.cost)})`;
    return undefined;
  }

  /**
   * Waits for one of the trial's places for a call in flight (`TrialLimits.maxCallsInFlight`),
   * first come first served; resolves with the function that gives it back (to the next waiting
   * call), or undefined when `gone` fires first (the agent left before its call started).
   * @internal
   */
  async place(gone: AbortSignal): Promise<(() => void) | undefined> {
    const max = this.options.limits?.maxCallsInFlight ?? DEFAULT_CALLS_IN_FLIGHT;
    if (this.inFlight < max) this.inFlight += 1;
    else {
      // A place given back passes to the first waiting call directly, so no new call takes it first.
      const placed = await new Promise<boolean>((resolve) => {
        const wake = () => {
          gone.removeEventListener('abort', leave);
          resolve(true);
        };
        const leave = () => {
          const at = this.waiting.indexOf(wake);
          if (at >= 0) this.waiting.splice(at, 1);
          resolve(false);
        };
        if (gone.aborted) return resolve(false);
        this.waiting.push(wake);
        gone.addEventListener('abort', leave, { once: true });
      });
      if (!placed) return undefined;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight -= 1;
    };
  }

  /**
   * Admits a starting call against every budget, or says why not: the trial's turns, tokens and
   * cost and the job's budget, each counting what finished calls used plus what calls in flight
   * hold. The call holds its input estimate and its output cap until `release`. The cap is the
   * call's own (`requestedCap`), or, when it sets none and a token or cost budget applies, the
   * model's output limit from the price table; either is lowered to what the budgets leave
   * (`cap`, to send upstream, is set when it differs from the call's own). A call whose input
   * leaves no output token is refused when that holds with no call in flight, else it is told to
   * `wait` for one to end (an agent's parallel calls are not refused by each other's holds). A
   * model of unknown output limit and a call without a cap hold no output (the in-flight limit
   * bounds them), a model of unknown price no USD. Synchronous: no other call is admitted between
   * the check and the hold.
   * @internal
   */
  admit(
    inputTokens: number,
    requestedCap: number | undefined,
  ): { refusal: string } | { wait: true } | { cap?: number; release: () => void } {
    const refusal = this.refusal();
    if (refusal) return { refusal };
    const limits = this.options.limits ?? {};
    const prices = this.gateway.prices;
    const price = prices.priceOf(this.model);
    const held = sumHolds(this.holds);
    /**
     * Output tokens each budget leaves this call, the same were no call in flight (`free`), and
     * what to say when none are left.
     */
    /** `job`: the job's budget (a call it can never pay for spends it for the job). */
    const rooms: Array<{ tokens: number; free: number; why: string; job?: true }> = [];
    if (limits.maxTokens !== undefined) {
      const used = this.usage.inputTokens + this.usage.outputTokens;
      rooms.push({
        tokens: limits.maxTokens - used - held.tokens - inputTokens,
        free: limits.maxTokens - used - inputTokens,
        why: `the trial's limit of ${limits.maxTokens} tokens leaves no room for this call (~${inputTokens} input tokens; used ${used}, ${held.tokens} held by calls in flight)`,
      });
    }
    const inputUsd = price
      ? (inputTokens * Math.max(price.input, price.cache_write ?? price.input)) / 1e6
      : 0;
    const outputTokensFor = (usd: number) =>
      price && price.output > 0
        ? Math.floor(((usd - inputUsd) * 1e6) / price.output)
        : Number.POSITIVE_INFINITY;
    if (price && limits.maxCostUsd !== undefined && !this.costUnknown)
      rooms.push({
        tokens: outputTokensFor(limits.maxCostUsd - this.cost - held.usd),
        free: outputTokensFor(limits.maxCostUsd - this.cost),
        why: `the trial's cost limit of $${limits.maxCostUsd} leaves no room for this call (used $${roundUsd(this.cost)}, $${roundUsd(held.usd)} held by calls in flight)`,
      });
    const job = this.gateway.jobRoom();
    if (price && job)
      rooms.push({
        tokens: outputTokensFor(job.usd),
        free: outputTokensFor(job.usd + job.held),
        why: `the job's model budget of $${job.budget} leaves no room for this call ($${job.spent} spent, $${roundUsd(job.held)} held by calls in flight)`,
        job: true,
      });
    const tight = rooms.reduce<(typeof rooms)[number] | undefined>(
      (a, b) => (a === undefined || b.tokens < a.tokens ? b : a),
      undefined,
    );
    if (tight && tight.tokens < 1) {
      const never = rooms.find((room) => room.free < 1);
      // The job's budget cannot pay for this call even with nothing in flight: it is spent for
      // the job too, which starts no more trials (else each trial would start to be refused).
      if (rooms.some((room) => room.job && room.free < 1)) this.gateway.markBudgetSpent();
      return never ? { refusal: never.why } : { wait: true };
    }
    let cap = requestedCap ?? (tight ? prices.outputLimit(this.model) : undefined);
    if (cap !== undefined && tight) cap = Math.min(cap, tight.tokens);
    const hold: CallHold = {
      tokens: inputTokens + (cap ?? 0),
      usd: price ? inputUsd + ((cap ?? 0) * price.output) / 1e6 : 0,
    };
    this.holds.add(hold);
    this.gateway.hold(hold);
    this.calls += 1;
    return {
      ...(cap !== undefined && cap !== requestedCap ? { cap } : {}),
      release: () => {
        this.holds.delete(hold);
        this.gateway.release(hold);
      },
    };
  }

  /** Counts and records one finished call. */
  record(call: ModelCallRecord, usage: TokenUsage, cost: number | undefined, counted: boolean): void {
    // What an upstream answered may spell a key (src/models/redact.ts): never in a record.
    const record = this.gateway.redactor.value(call);
    this.records.push(record);
    if (counted) {
      this.usage = addUsage(this.usage, usage);
      if (cost === undefined) this.costUnknown = true;
      else this.cost += cost;
      this.gateway.addJobCost(cost ?? 0);
    }
    this.options.onCall?.(record);
    this.options.emit?.(modelCallEvent(record, this.model.provider));
    const file = this.options.recordFile;
    if (file) {
      const line = `${JSON.stringify(record)}\n`;
      this.writing = this.writing
        .then(() => mkdir(dirname(file), { recursive: true }))
        .then(() => appendFile(file, line))
        .catch(() => {});
    }
  }

  /** Base URLs per protocol as seen from `origin` (default the gateway's own address). */
  endpoints(origin = this.gateway.url): { openai: string; anthropic: string; gemini: string } {
    return { openai: `${origin}/v1`, anthropic: origin, gemini: origin };
  }

  /**
   * The variables that point the usual SDKs and CLIs at the gateway with this trial's
   * token (see docs/models.md), for an agent that reaches the gateway at `origin`.
   */
  agentEnv(origin = this.gateway.url): Record<string, string> {
    const e = this.endpoints(origin);
    return {
      OPENAI_BASE_URL: e.openai,
      OPENAI_API_BASE: e.openai,
      OPENAI_API_KEY: this.token,
      ANTHROPIC_BASE_URL: e.anthropic,
      ANTHROPIC_API_KEY: this.token,
      ANTHROPIC_AUTH_TOKEN: this.token,
      GOOGLE_GEMINI_BASE_URL: e.gemini,
      GEMINI_API_KEY: this.token,
      GOOGLE_API_KEY: this.token,
      BERTH_MODEL_GATEWAY: origin,
      BERTH_MODEL_TOKEN: this.token,
      BERTH_MODEL: this.model.id,
    };
  }

  /** Ends the session: later calls with its token are refused. Waits for its records to be written. */
  async close(): Promise<SessionTotals> {
    this.closed = true;
    this.gateway.forget(this);
    await this.writing;
    return this.totals();
  }
}

export interface GatewayOptions {
  credentials: Credentials;
  prices: PriceTable;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** USD the whole job may spend; past it every call is refused. */
  jobBudgetUsd?: number;
  /** Response cache (`--model-cache`). */
  cache?: ResponseCache;
  /** Seconds one upstream request may take, streaming included (default 600). */
  requestTimeoutSec?: number;
  retry?: Partial<RetryPolicy>;
  /** fetch used for upstream calls (tests). */
  fetch?: FetchFunction;
  /**
   * Also listen on a Unix socket in a folder of its own (`gateway.sock`, with the relay
   * programs beside it), which environments mount to reach the gateway without a network
   * (default true).
   */
  socket?: boolean;
}

/** The gateway's Unix socket, in its folder. */
export const GATEWAY_SOCKET = 'gateway.sock';

/** Largest request body accepted, in bytes. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/** Which protocol and method a request path is. */
export function routeOf(
  method: string,
  pathname: string,
): { protocol: WireProtocol; method?: string } | undefined {
  if (method !== 'POST') return undefined;
  const path = pathname.replace(/\/+$/, '');
  if (/(^|\/)chat\/completions$/.test(path)) return { protocol: 'openai-chat' };
  if (/(^|\/)responses$/.test(path)) return { protocol: 'openai-responses' };
  if (/(^|\/)completions$/.test(path)) return { protocol: 'openai-completions' };
  if (/(^|\/)messages\/count_tokens$/.test(path))
    return { protocol: 'anthropic-messages', method: 'count_tokens' };
  if (/(^|\/)messages$/.test(path)) return { protocol: 'anthropic-messages' };
  const gemini = geminiPath(path);
  if (gemini && (gemini.method === 'generateContent' || gemini.method === 'streamGenerateContent'))
    return { protocol: 'gemini', method: gemini.method };
  if (gemini && gemini.method === 'countTokens') return { protocol: 'gemini', method: 'countTokens' };
  return undefined;
}

/** The token a request carries. */
function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  for (const name of ['x-api-key', 'x-goog-api-key']) {
    const value = req.headers[name];
    if (typeof value === 'string' && value !== '') return value.trim();
  }
  return url.searchParams.get('key') ?? undefined;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new GatewayRequestError(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A stream frame that tells the agent the call failed midway, in its protocol. */
function errorFrame(protocol: WireProtocol, message: string): string {
  switch (protocol) {
    case 'anthropic-messages':
      return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message } })}\n\n`;
    case 'openai-responses':
      return `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_error', message, param: null })}\n\n`;
    case 'gemini':
      return `data: ${JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } })}\n\n`;
    default:
      return `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`;
  }
}

/** A part of the record's copy of a message, with large file data left out. */
function recordMessages(messages: LanguageModelV3Message[]): LanguageModelV3Message[] {
  return messages.map((m) => {
    if (m.role === 'system') return m;
    return {
      ...m,
      content: (m.content as Array<{ type: string }>).map((part) =>
        part.type === 'file' ? { ...part, data: '[file data omitted]' } : part,
      ),
    } as LanguageModelV3Message;
  });
}

/** The messages after the last assistant message (the whole prompt on a first call). */
function newInput(messages: LanguageModelV3Message[]): LanguageModelV3Message[] {
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'assistant') last = i;
  });
  return recordMessages(messages.slice(last + 1));
}

function outputOf(answer: ModelAnswer): NonNullable<ModelCallRecord['output']> {
  const text: string[] = [];
  const reasoning: string[] = [];
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const part of answer.content) {
    if (part.type === 'text') text.push(part.text);
    else if (part.type === 'reasoning') reasoning.push(part.text);
    else if (part.type === 'tool-call')
      calls.push({
        id: part.toolCallId,
        name: part.toolName,
        arguments: typeof part.input === 'string' ? part.input : JSON.stringify(part.input),
      });
  }
  return {
    text: text.join(''),
    reasoning: reasoning.join(''),
    tool_calls: calls,
    finish_reason: answer.finishReason.unified,
  };
}

/** The cache key of a call: the model and the request, not how it is streamed. */
function cacheKey(target: ModelTarget, call: ParsedRequest['call']): string {
  const { abortSignal: _signal, headers: _headers, ...rest } = call;
  return createHash('sha256')
    .update(JSON.stringify([target.id, rest]))
    .digest('hex');
}

function errorStatus(error: unknown): { status: number; message: string; body?: string } {
  if (error instanceof GatewayRequestError) return { status: error.status, message: error.message };
  if (error instanceof UpstreamError)
    return { status: error.status, message: error.message, ...(error.body ? { body: error.body } : {}) };
  if (APICallError.isInstance(error))
    return {
      // A 2xx the provider could not read (a malformed body) is a bad gateway for the agent.
      status: error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 502,
      message: `upstream: ${error.message}`,
      ...(error.responseBody && (error.statusCode ?? 0) >= 400 ? { body: error.responseBody } : {}),
    };
  const e = error as Error;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return { status: 504, message: `upstream did not answer within the request timeout` };
  return { status: 502, message: `upstream: ${withCause(e)}` };
}

/** An error's message with its innermost cause (`fetch failed (connect ECONNREFUSED 127.0.0.1:8000)`). */
function withCause(error: Error | undefined): string {
  const message = error?.message ?? String(error);
  let inner: unknown = error?.cause;
  for (let depth = 0; depth < 5 && inner instanceof Error && inner.cause instanceof Error; depth++)
    inner = inner.cause;
  return inner instanceof Error && inner.message && !message.includes(inner.message)
    ? `${message} (${inner.message})`
    : message;
}

export class ModelGateway {
  private server: Server | undefined;
  private socketServer: Server | undefined;
  /** The folder of the Unix socket and the relay programs (mounted into environments). */
  socketDir: string | undefined;
  private readonly sessions = new Map<string, GatewaySession>();
  private readonly models = new Map<string, LanguageModelV3>();
  private jobCost = 0;
  /** What the job's calls in flight hold (`CallHold`). */
  private readonly holds = new Set<CallHold>();
  /** Calls waiting for a call in flight to give back what it held. */
  private readonly freed = new Set<() => void>();
  private address: AddressInfo | undefined;
  private readonly retry: RetryPolicy;
  private readonly live = new Set<ServerResponse>();
  /** Aborted by `stop()`: calls still reading an upstream for an agent that left end with it. */
  private readonly stopping = new AbortController();
  /** Every key this gateway has added to an upstream request or may add (its trials' models'). */
  private readonly keys = new Set<string>();
  private keyRedactor = new KeyRedactor([]);

  private constructor(private readonly options: GatewayOptions) {
    this.retry = { ...DEFAULT_RETRY, ...(options.retry ?? {}) };
  }

  /** Starts a gateway; resolves once it listens. */
  static async start(options: GatewayOptions): Promise<ModelGateway> {
    const gateway = new ModelGateway(options);
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      // Small frames go out at once (Nagle's delay against the client's delayed ACK costs 40 ms).
      req.socket.setNoDelay?.(true);
      gateway.live.add(res);
      res.on('close', () => gateway.live.delete(res));
      gateway.handle(req, res).catch((error) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(
            gateway.redactor.text(
              JSON.stringify({ error: { message: `berth gateway: ${(error as Error).message}` } }),
            ),
          );
        } else res.end();
      });
    };
    const server = createServer(listener);
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    gateway.server = server;
    gateway.address = server.address() as AddressInfo;
    if (options.socket !== false) {
      try {
        // A short path: a socket's path may hold about 100 characters.
        const dir = await ownedTempDir('berth-gw-');
        gateway.socketDir = dir;
        await writeFile(join(dir, 'relay.cjs'), RELAY_NODE_SOURCE);
        await writeFile(join(dir, 'relay.py'), RELAY_PYTHON_SOURCE);
        const socketServer = createServer(listener);
        socketServer.keepAliveTimeout = 65_000;
        await new Promise<void>((resolve, reject) => {
          socketServer.once('error', reject);
          socketServer.listen(join(dir, GATEWAY_SOCKET), () => resolve());
        });
        gateway.socketServer = socketServer;
        // Sandboxed commands and container users of any uid connect; they still need a token.
        await chmod(join(dir, GATEWAY_SOCKET), 0o666);
        await chmod(dir, 0o755);
      } catch (error) {
        await gateway.stop();
        throw error;
      }
    }
    return gateway;
  }

  /** `http://HOST:PORT` of the gateway. */
  get url(): string {
    const a = this.address;
    if (!a) throw new Error('the gateway is not listening');
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  get port(): number {
    return this.address?.port ?? 0;
  }

  /** Opens a trial's session; its token is valid until `close()`. */
  openSession(options: SessionOptions): GatewaySession {
    this.holdKey(this.options.credentials.keyFor(options.model));
    const session = new GatewaySession(this, options);
    this.sessions.set(session.token, session);
    return session;
  }

  /** Adds a key to those every answer and record is redacted of. */
  private holdKey(key: string | undefined): void {
    if (!key || this.keys.has(key)) return;
    this.keys.add(key);
    this.keyRedactor = new KeyRedactor(this.keys);
  }

  /**
   * The one redaction of every key the gateway holds (src/models/redact.ts), applied at every
   * exit: answers of any status, streamed or not, errors, records, the response cache.
   * @internal
   */
  get redactor(): KeyRedactor {
    return this.keyRedactor;
  }

  /** @internal */
  admit(session: GatewaySession): void {
    this.sessions.set(session.token, session);
  }

  /** @internal */
  forget(session: GatewaySession): void {
    this.sessions.delete(session.token);
  }

  /** @internal */
  addJobCost(usd: number): void {
    this.jobCost += usd;
  }

  /** @internal */
  hold(hold: CallHold): void {
    this.holds.add(hold);
  }

  /** @internal */
  release(hold: CallHold): void {
    if (!this.holds.delete(hold)) return;
    const waiting = [...this.freed];
    this.freed.clear();
    for (const wake of waiting) wake();
  }

  /**
   * Resolves true when a call in flight next gives back what it held (a waiting call may fit
   * then), false when `gone` fires first.
   * @internal
   */
  released(gone: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (gone.aborted) return resolve(false);
      const wake = () => {
        gone.removeEventListener('abort', leave);
        resolve(true);
      };
      const leave = () => {
        this.freed.delete(wake);
        resolve(false);
      };
      this.freed.add(wake);
      gone.addEventListener('abort', leave, { once: true });
    });
  }

  /** The price table (prices and output limits). @internal */
  get prices(): PriceTable {
    return this.options.prices;
  }

  /** What the job's budget leaves for a new call (spent and held by calls in flight taken off), if it has one. @internal */
  jobRoom(): { usd: number; budget: number; spent: number; held: number } | undefined {
    const budget = this.options.jobBudgetUsd;
    if (budget === undefined) return undefined;
    const held = sumHolds(this.holds).usd;
    return { usd: budget - this.jobCost - held, budget, spent: this.jobCostUsd, held };
  }

  /** USD spent by the job so far (calls of unknown cost count 0). */
  get jobCostUsd(): number {
    return roundUsd(this.jobCost);
  }

  private budgetSpent = false;

  /** @internal The job's budget cannot pay for a call even with nothing in flight. */
  markBudgetSpent(): void {
    this.budgetSpent = true;
  }

  /** True once the job's budget is spent (or cannot pay for a call): the job starts no more trials. */
  get budgetExhausted(): boolean {
    return (
      this.options.jobBudgetUsd !== undefined &&
      (this.budgetSpent || this.jobCost >= this.options.jobBudgetUsd)
    );
  }

  /** @internal */
  budgetRefusal(): string | undefined {
    return this.budgetExhausted
      ? `the job's model budget of $${this.options.jobBudgetUsd} is spent ($${this.jobCostUsd})`
      : undefined;
  }

  /** Stops listening and ends open connections. */
  async stop(): Promise<void> {
    const servers = [this.server, this.socketServer].filter((s): s is Server => s !== undefined);
    this.server = undefined;
    this.socketServer = undefined;
    for (const res of this.live) res.destroy();
    this.stopping.abort(new Error('the gateway stopped'));
    for (const server of servers) {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    if (this.socketDir) await rm(this.socketDir, { recursive: true, force: true });
    this.socketDir = undefined;
  }

  private model(target: ModelTarget): LanguageModelV3 {
    let model = this.models.get(target.id);
    if (!model) {
      model = languageModel(target, this.options.credentials.keyFor(target), this.options.fetch);
      this.models.set(target.id, model);
    }
    return model;
  }

  private sendJson(res: ServerResponse, status: number, body: unknown): void {
    const text = this.redactor.text(JSON.stringify(this.redactor.value(body)));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (req.method === 'GET' && /(^|\/)models$/.test(url.pathname.replace(/\/+$/, ''))) {
      const session = this.sessions.get(tokenOf(req, url) ?? '');
      if (!session) return this.sendJson(res, 401, { error: { message: 'berth gateway: unknown token' } });
      const id = session.model.name;
      return this.sendJson(res, 200, {
        object: 'list',
        data: [
          {
            id,
            object: 'model',
            type: 'model',
            display_name: id,
            created: 0,
            owned_by: session.model.provider,
          },
        ],
      });
    }
    const route = routeOf(req.method ?? '', url.pathname);
    if (!route) {
      req.resume();
      return this.sendJson(res, 404, {
        error: {
          message: `berth gateway: no such endpoint ${req.method} ${url.pathname}`,
          type: 'not_found_error',
        },
      });
    }
    const codec = CODECS[route.protocol];
    const session = this.sessions.get(tokenOf(req, url) ?? '');
    if (!session) {
      req.resume();
      return this.sendJson(res, 401, codec.errorBody(401, 'berth gateway: unknown or expired token'));
    }
    let body: unknown;
    try {
      const bytes = await readBody(req);
      body = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      const status = error instanceof GatewayRequestError ? error.status : 400;
      return this.sendJson(
        res,
        status,
        codec.errorBody(status, `berth gateway: the request body is not JSON (${(error as Error).message})`),
      );
    }
    if (route.method === 'count_tokens' || route.method === 'countTokens')
      return this.countTokens(res, codec, body, route.protocol, url);
    let parsed: ParsedRequest;
    try {
      parsed = codec.parseRequest(body, url);
    } catch (error) {
      const { status, message } = errorStatus(error);
      return this.sendJson(res, status, codec.errorBody(status, `berth gateway: ${message}`));
    }
    const target = session.model;
    const base: Omit<
      ModelCallRecord,
      | 'duration_ms'
      | 'status'
      | 'error'
      | 'attempts'
      | 'usage'
      | 'cost_usd'
      | 'cost_source'
      | 'output'
      | 'route'
    > = {
      type: 'model-call',
      trial: session.options.trialName,
      seq: 0,
      started_at: new Date(started).toISOString(),
      protocol: route.protocol,
      model: target.id,
      requested_model: parsed.requestedModel,
      stream: parsed.stream,
      input: newInput(parsed.call.prompt),
      n_messages: parsed.call.prompt.length,
      tools: (parsed.call.tools ?? []).map((t) => t.name),
      warnings: parsed.warnings ?? [],
    };
    const unserved =
      route.protocol === 'openai-completions' && !target.protocols.includes(route.protocol)
        ? `text completions (/v1/completions) can only be passed through to an OpenAI-compatible server; ${target.id} does not serve them`
        : undefined;
    /** Answers a call that never reaches the model (recorded, not counted). */
    const refuse = (seq: number, status: number, message: string, type?: string) => {
      session.record(
        {
          ...base,
          seq,
          route: 'refused',
          duration_ms: Date.now() - started,
          status,
          error: message,
          attempts: 0,
          usage: usageRecord(ZERO_USAGE),
          cost_usd: 0,
          cost_source: null,
          output: null,
        },
        ZERO_USAGE,
        0,
        false,
      );
      this.sendJson(res, status, codec.errorBody(status, `berth gateway: ${message}`, type));
    };
    // A spent limit is 403 (agents do not retry it); a request berth cannot serve, 400.
    const spent = (message: string) =>
      refuse(
        session.calls + 1,
        403,
        message,
        route.protocol === 'anthropic-messages' ? 'permission_error' : 'budget_exceeded',
      );
    const early = session.refusal();
    if (early) return spent(early);
    if (unserved) return refuse(session.calls + 1, 400, unserved);
    // A call past the trial's calls in flight waits for a place; one whose agent leaves meanwhile
    // never starts (nothing to count, nobody to answer).
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const giveBack = await session.place(gone.signal);
    if (!giveBack) return;
    let release = () => {};
    try {
      // The call is a turn, and holds its worst case against every budget, from here to its end.
      // One that fits only once calls in flight end waits for them.
      const input = estimateTokens(parsed.call);
      let admitted = session.admit(input, parsed.call.maxOutputTokens);
      while ('wait' in admitted) {
        if (!(await this.released(gone.signal))) return;
        admitted = session.admit(input, parsed.call.maxOutputTokens);
      }
      if ('refusal' in admitted) return spent(admitted.refusal);
      release = admitted.release;
      const cap = admitted.cap;
      const sent: ParsedRequest =
        cap === undefined ? parsed : { ...parsed, call: { ...parsed.call, maxOutputTokens: cap } };
      if (cap !== undefined)
        base.warnings = [
          ...base.warnings,
          `berth gateway: output cap set to ${cap} tokens (what the budgets leave)`,
        ];
      const seq = session.calls;
      const key = this.options.credentials.keyFor(target);
      this.holdKey(key);
      if (!key && target.needsKey)
        return refuse(
          seq,
          401,
          `no key for ${target.provider} (set ${target.keyVar ?? 'its key variable'} or pass --env-file)`,
        );

      // An agent that closes its connection does not end the call: the upstream is read to its
      // end (within the request timeout), so the usage it reports last is counted. Stopping the
      // read there let a streamed answer, taken whole before its usage frame, count 0 tokens and
      // $0 against every budget (breaker11 F1); a provider bills what it generated anyway.
      const timeoutMs = (this.options.requestTimeoutSec ?? 600) * 1000;
      const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(timeoutMs)]);
      const attempts = { n: 0 };
      const finishRecord = (
        route: ModelCallRecord['route'],
        status: number,
        error: string | null,
        answer: ModelAnswer | undefined,
        providerCost: number | undefined,
      ) => {
        // The call's real usage replaces what it held.
        release();
        const usage = answer ? usageFromV3(answer.usage) : { ...ZERO_USAGE };
        let cost: number | undefined;
        let source: CostSource | null = null;
        if (route === 'cache') {
          cost = 0;
          source = 'cache';
        } else if (providerCost !== undefined) {
          cost = providerCost;
          source = 'provider';
        } else {
          cost = this.options.prices.cost(target, usage);
          if (cost !== undefined) source = 'price-table';
        }
        session.record(
          {
            ...base,
            seq,
            route,
            duration_ms: Date.now() - started,
            status,
            error,
            attempts: attempts.n,
            usage: usageRecord(usage),
            cost_usd: cost ?? null,
            cost_source: source,
            output: answer ? outputOf(answer) : null,
          },
          usage,
          cost,
          true,
        );
      };

      const cache = this.options.cache;
      const keyOfCall = cache ? cacheKey(target, parsed.call) : undefined;
      if (cache && keyOfCall) {
        const stored = await cache.get(keyOfCall);
        const hit = stored && this.redactor.value(stored);
        if (hit) {
          await this.reply(res, codec, parsed, hit, parsed.requestedModel || target.name);
          finishRecord('cache', 200, null, hit, undefined);
          return;
        }
      }

      const passthrough = target.protocols.includes(route.protocol);
      try {
        const result = passthrough
          ? await this.passThrough(
              req,
              res,
              codec,
              route.protocol,
              body as Record<string, unknown>,
              sent,
              target,
              key,
              signal,
              attempts,
              route.method,
              cap,
            )
          : await this.translate(res, codec, sent, target, signal, attempts);
        finishRecord(
          passthrough ? 'passthrough' : 'translated',
          result.status,
          result.error,
          result.answer,
          result.providerCost,
        );
        // An answer cut short by a cap the agent did not ask for is not the answer to its request.
        const cut = cap !== undefined && result.answer?.finishReason.unified === 'length';
        if (cache && keyOfCall && result.status === 200 && !result.error && result.answer && !cut)
          await cache.set(keyOfCall, result.answer);
      } catch (error) {
        const failure = errorStatus(
          signal.aborted && !(error instanceof UpstreamError)
            ? Object.assign(new Error('timeout'), { name: 'TimeoutError' })
            : error,
        );
        // An upstream may echo the key it was sent (an error about a bad key): never to the agent.
        const status = failure.status;
        const message = this.redactor.text(failure.message);
        const upstreamBody = failure.body === undefined ? undefined : this.redactor.text(failure.body);
        if (!res.headersSent) {
          if (upstreamBody !== undefined && passthrough) {
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(upstreamBody);
          } else this.sendJson(res, status, codec.errorBody(status, `berth gateway: ${message}`));
        } else {
          res.end(errorFrame(route.protocol, `berth gateway: ${message}`));
        }
        finishRecord(passthrough ? 'passthrough' : 'translated', status, message, undefined, undefined);
      }
    } finally {
      release();
      giveBack();
    }
  }

  /** Writes a stored answer in the agent's protocol, streamed when asked. */
  private async reply(
    res: ServerResponse,
    codec: ProtocolCodec,
    parsed: ParsedRequest,
    answer: ModelAnswer,
    model: string,
  ): Promise<void> {
    if (!parsed.stream) return this.sendJson(res, 200, codec.renderAnswer(answer, model, parsed));
    const encoder = codec.streamEncoder(model, parsed);
    res.writeHead(200, SSE_HEADERS);
    let out = '';
    for (const part of answerToParts(answer)) out += encoder.part(part);
    res.end(this.redactor.text(out + encoder.end()));
  }

  private async translate(
    res: ServerResponse,
    codec: ProtocolCodec,
    parsed: ParsedRequest,
    target: ModelTarget,
    signal: AbortSignal,
    attempts: { n: number },
  ): Promise<{ status: number; error: string | null; answer: ModelAnswer; providerCost?: number }> {
    const model = this.model(target);
    const name = parsed.requestedModel || target.name;
    const call = { ...parsed.call, abortSignal: signal };
    if (!parsed.stream) {
      const result = await withRetries(
        this.retry,
        () => {
          attempts.n += 1;
          return model.doGenerate(call);
        },
        signal,
      );
      const answer: ModelAnswer = this.redactor.value({
        content: result.content,
        finishReason: result.finishReason,
        usage: result.usage,
        ...(result.response?.id ? { id: result.response.id } : {}),
      });
      this.sendJson(res, 200, codec.renderAnswer(answer, name, parsed));
      return { status: 200, error: null, answer, ...costOfRaw(result.usage.raw) };
    }
    const { stream } = await withRetries(
      this.retry,
      () => {
        attempts.n += 1;
        return model.doStream(call);
      },
      signal,
    );
    const encoder = codec.streamEncoder(name, parsed);
    const accumulator = new AnswerAccumulator();
    res.writeHead(200, SSE_HEADERS);
    let error: string | null = null;
    const reader = stream.getReader();
    const out = this.redactor.stream();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.type === 'error') {
          error = `upstream: ${(value.error as Error)?.message ?? String(value.error)}`;
          break;
        }
        accumulator.add(value);
        const frames = out.push(encoder.part(value));
        if (frames && !res.destroyed) res.write(frames);
      }
    } catch (cause) {
      error = signal.aborted
        ? 'upstream did not finish within the request timeout'
        : `upstream: ${(cause as Error).message}`;
    } finally {
      reader.releaseLock();
    }
    res.end(
      out.push(error ? errorFrame(codec.protocol, `berth gateway: ${error}`) : encoder.end()) + out.end(),
    );
    const answer = this.redactor.value(accumulator.answer());
    return {
      status: 200,
      error: error && this.redactor.text(error),
      answer,
      ...costOfRaw(answer.usage.raw),
    };
  }

  private async passThrough(
    req: IncomingMessage,
    res: ServerResponse,
    codec: ProtocolCodec,
    protocol: WireProtocol,
    body: Record<string, unknown>,
    parsed: ParsedRequest,
    target: ModelTarget,
    key: string | undefined,
    signal: AbortSignal,
    attempts: { n: number },
    method?: string,
    outputCap?: number,
  ): Promise<{ status: number; error: string | null; answer?: ModelAnswer; providerCost?: number }> {
    const fetch = this.options.fetch ?? globalThis.fetch;
    const url = passthroughUrl(target, protocol, parsed.stream, method);
    const init = {
      method: 'POST',
      headers: passthroughHeaders(target, key, req.headers),
      body: JSON.stringify(passthroughBody(target, protocol, body, parsed.stream, outputCap)),
      signal,
    };
    const response = await withRetries(
      this.retry,
      async () => {
        attempts.n += 1;
        const r = await fetch(url, init);
        if (!r.ok) {
          const text = await r.text().catch(() => '');
          const headers: Record<string, string> = {};
          r.headers.forEach((value, name) => {
            headers[name] = value;
          });
          throw new UpstreamError(
            `upstream answered ${r.status}: ${text.slice(0, 500)}`,
            r.status,
            headers,
            text,
          );
        }
        return r;
      },
      signal,
    );
    const streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (!streamed) {
      const received = await response.text();
      // A 200 may echo the key too (a debugging proxy, a compromised endpoint).
      const text = this.redactor.text(received);
      res.writeHead(response.status, {
        'content-type': response.headers.get('content-type') ?? 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      try {
        const { answer, providerCost } = codec.readAnswer(JSON.parse(received));
        return {
          status: response.status,
          error: null,
          answer: this.redactor.value(answer),
          ...(providerCost !== undefined ? { providerCost } : {}),
        };
      } catch (error) {
        return {
          status: response.status,
          error: `the upstream's answer could not be read: ${(error as Error).message}`,
        };
      }
    }
    res.writeHead(response.status, SSE_HEADERS);
    const reader = codec.answerReader();
    let readError: string | null = null;
    const parser = createParser({
      onEvent: (event) => {
        if (readError) return;
        try {
          reader.event(event.event, event.data);
        } catch (error) {
          readError = (error as Error).message;
        }
      },
    });
    const decoder = new TextDecoder();
    const out = this.redactor.stream();
    let error: string | null = null;
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        const ready = out.push(text);
        if (ready && !res.destroyed) res.write(ready);
        parser.feed(text);
      }
    } catch (cause) {
      error = signal.aborted
        ? 'upstream did not finish within the request timeout'
        : `upstream: ${(cause as Error).message}`;
      error = this.redactor.text(error);
      if (!res.destroyed) res.write(out.push(errorFrame(protocol, `berth gateway: ${error}`)));
    }
    res.end(out.push(decoder.decode()) + out.end());
    const answer = this.redactor.value(reader.answer());
    const cost = reader.providerCost();
    return {
      status: response.status,
      error: error ?? (readError && this.redactor.text(readError)),
      answer,
      ...(cost !== undefined ? { providerCost: cost } : {}),
    };
  }

  /** Anthropic's count_tokens and Gemini's countTokens: passed through, else estimated (4 characters a token). */
  private async countTokens(
    res: ServerResponse,
    codec: ProtocolCodec,
    body: unknown,
    protocol: WireProtocol,
    url: URL,
  ): Promise<void> {
    let call: ParsedRequest['call'];
    try {
      call = codec.parseRequest(
        protocol === 'anthropic-messages' ? { max_tokens: 1, ...(body as object) } : body,
        url,
      ).call;
    } catch (error) {
      const { status, message } = errorStatus(error);
      return this.sendJson(res, status, codec.errorBody(status, `berth gateway: ${message}`));
    }
    const tokens = estimateTokens(call);
    return this.sendJson(
      res,
      200,
      protocol === 'gemini' ? { totalTokens: tokens } : { input_tokens: tokens },
    );
  }
}

function sumHolds(holds: Iterable<CallHold>): CallHold {
  const sum = { tokens: 0, usd: 0 };
  for (const hold of holds) {
    sum.tokens += hold.tokens;
    sum.usd += hold.usd;
  }
  return sum;
}

function usageRecord(usage: TokenUsage): ModelCallRecord['usage'] {
  return {
    input_tokens: usage.inputTokens,
    cached_tokens: usage.cachedTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    output_tokens: usage.outputTokens,
    reasoning_tokens: usage.reasoningTokens,
  };
}

/** The provider's cost in the AI SDK's raw usage (OpenRouter's `usage.cost`). */
function costOfRaw(raw: unknown): { providerCost?: number } {
  const cost = (raw as { cost?: unknown } | undefined)?.cost;
  return typeof cost === 'number' && Number.isFinite(cost) ? { providerCost: cost } : {};
}
