/**
 * The gateway's client side: how a call reaches the real model API.
 *
 * - **Translated** calls go through the Vercel AI SDK's provider for the target
 *   (`@ai-sdk/openai`, `@ai-sdk/openai-compatible`, `@ai-sdk/anthropic`,
 *   `@ai-sdk/google`): `doGenerate` / `doStream` of its `LanguageModelV3`.
 * - **Passed-through** calls (the agent speaks the upstream's own protocol) send
 *   the agent's body as it is, with the model name and key replaced, so no
 *   feature the agent uses is lost in translation.
 *
 * Both retry what a provider asks to retry (network errors, 408, 409, 429, 5xx)
 * with exponential back-off (2 s, 4 s, 8 s, ...) that honours `retry-after-ms` /
 * `Retry-After` (up to 60 s), and both give up on a request after a timeout.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModelV3 } from '@ai-sdk/provider';
import { retryWithExponentialBackoff } from '@ai-sdk/provider-utils';
import type { ModelTarget } from './providers.ts';
import type { WireProtocol } from './types.ts';

export type FetchFunction = typeof globalThis.fetch;

/** How hard the client side tries. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 4). */
  maxRetries: number;
  /** First back-off in milliseconds (default 2000), doubled each time. */
  initialDelayMs: number;
  /** Longest `Retry-After` honoured, in milliseconds (default 60000); longer ones fall back to the back-off. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 4, initialDelayMs: 2000, maxRetryAfterMs: 60_000 };

/** Statuses a provider asks to retry. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The delay a response asks for (`retry-after-ms`, `Retry-After` seconds or date), in ms. */
export function retryAfterMs(headers: Record<string, string | undefined> | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && !Number.isNaN(Number.parseFloat(ms))) return Number.parseFloat(ms);
  const after = headers['retry-after'];
  if (after === undefined) return undefined;
  const seconds = Number.parseFloat(after);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** A status the upstream answered with, for errors that carry one. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    message: string,
    readonly status: number,
    readonly headers?: Record<string, string>,
    readonly body?: string,
  ) {
    super(message);
  }
}

/**
 * Runs `attempt` under the retry policy. An error is retried when it is an AI SDK
 * `APICallError` marked retryable, an `UpstreamError` with a retryable status, or a
 * network failure (a `TypeError` from fetch); never after `signal` aborted.
 */
export function withRetries<T>(
  policy: RetryPolicy,
  attempt: () => PromiseLike<T>,
  signal?: AbortSignal,
): Promise<T> {
  const retry = retryWithExponentialBackoff({
    maxRetries: policy.maxRetries,
    initialDelayInMs: policy.initialDelayMs,
    backoffFactor: 2,
    ...(signal ? { abortSignal: signal } : {}),
    shouldRetry: (error) => {
      if (signal?.aborted) return false;
      if (APICallError.isInstance(error)) return error.isRetryable;
      if (error instanceof UpstreamError) return isRetryableStatus(error.status);
      return error instanceof TypeError;
    },
    getDelayInMs: ({ error, exponentialBackoffDelay }) => {
      const headers = APICallError.isInstance(error)
        ? error.responseHeaders
        : error instanceof UpstreamError
          ? error.headers
          : undefined;
      const asked = retryAfterMs(headers);
      return asked !== undefined && asked >= 0 && asked <= policy.maxRetryAfterMs
        ? asked
        : exponentialBackoffDelay;
    },
    // The last error itself (its status and body go back to the agent).
    createRetryError: ({ errors }) => errors.at(-1),
  });
  return Promise.resolve(retry(attempt));
}

/** The AI SDK model of a target, talking to its base URL with its key. */
export function languageModel(
  target: ModelTarget,
  key: string | undefined,
  fetch?: FetchFunction,
): LanguageModelV3 {
  const common = { baseURL: target.baseUrl, ...(fetch ? { fetch } : {}) };
  switch (target.sdk) {
    case 'openai':
      return createOpenAI({ ...common, apiKey: key ?? 'no-key' }).chat(target.name);
    case 'anthropic':
      return createAnthropic({ ...common, apiKey: key ?? 'no-key' }).languageModel(target.name);
    case 'google':
      return createGoogleGenerativeAI({ ...common, apiKey: key ?? 'no-key' }).languageModel(target.name);
    default:
      return createOpenAICompatible({
        ...common,
        name: target.provider,
        ...(key ? { apiKey: key } : {}),
        includeUsage: true,
      }).chatModel(target.name);
  }
}

/** The upstream URL of a passed-through call. */
export function passthroughUrl(
  target: ModelTarget,
  protocol: WireProtocol,
  stream: boolean,
  method?: string,
): string {
  switch (protocol) {
    case 'openai-chat':
      return `${target.baseUrl}/chat/completions`;
    case 'openai-responses':
      return `${target.baseUrl}/responses`;
    case 'openai-completions':
      return `${target.baseUrl}/completions`;
    case 'anthropic-messages':
      return `${target.baseUrl}/messages`;
    case 'gemini':
      return `${target.baseUrl}/models/${encodeURIComponent(target.name)}:${method ?? (stream ? 'streamGenerateContent' : 'generateContent')}${stream ? '?alt=sse' : ''}`;
  }
}

/** Request headers a passed-through call keeps from the agent's. */
const KEPT_HEADERS = ['anthropic-version', 'anthropic-beta', 'openai-beta', 'accept'];

/** Headers of a passed-through call: the agent's kept ones and the real key. */
export function passthroughHeaders(
  target: ModelTarget,
  key: string | undefined,
  incoming: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const name of KEPT_HEADERS) {
    const value = incoming[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (target.sdk === 'anthropic') {
    headers['anthropic-version'] ??= '2023-06-01';
    if (key) headers['x-api-key'] = key;
  } else if (target.sdk === 'google') {
    if (key) headers['x-goog-api-key'] = key;
  } else if (key) headers.authorization = `Bearer ${key}`;
  if (target.provider === 'openrouter') {
    headers['http-referer'] = 'https://github.com/berth';
    headers['x-title'] = 'berth';
  }
  return headers;
}

/**
 * The agent's body made ready for the upstream: the model replaced, usage asked for, and the
 * output cap the gateway's budgets set (`outputCap`, src/models/gateway.ts) written in the
 * protocol's own field: `max_completion_tokens` or `max_tokens` (chat: the field the agent used,
 * else OpenAI's current one for OpenAI and `max_tokens` for other servers), `max_output_tokens`
 * (Responses), `max_tokens` (Messages, with an extended-thinking budget lowered below it),
 * `generationConfig.maxOutputTokens` (Gemini), `max_tokens` (text completions).
 */
export function passthroughBody(
  target: ModelTarget,
  protocol: WireProtocol,
  body: Record<string, unknown>,
  stream: boolean,
  outputCap?: number,
): unknown {
  const out: Record<string, unknown> = { ...body };
  if (outputCap !== undefined) {
    if (protocol === 'openai-chat') {
      const named = ['max_completion_tokens', 'max_tokens'].filter(
        (k) => body[k] !== undefined && body[k] !== null,
      );
      for (const k of named.length > 0
        ? named
        : [target.provider === 'openai' ? 'max_completion_tokens' : 'max_tokens'])
        out[k] = outputCap;
    } else if (protocol === 'openai-responses') out.max_output_tokens = outputCap;
    else if (protocol === 'gemini')
      out.generationConfig = {
        ...((body.generationConfig as object | undefined) ?? {}),
        maxOutputTokens: outputCap,
      };
    else {
      out.max_tokens = outputCap;
      // Anthropic wants a thinking budget below max_tokens (and of 1,024 at least).
      const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
      if (
        protocol === 'anthropic-messages' &&
        thinking?.type === 'enabled' &&
        typeof thinking.budget_tokens === 'number' &&
        thinking.budget_tokens >= outputCap
      )
        out.thinking = { ...thinking, budget_tokens: Math.max(1024, outputCap - 1) };
    }
  }
  if (protocol !== 'gemini') out.model = target.name;
  // OpenAI (and vLLM) put usage in a stream only when asked, for chat and text completions
  // alike: a streamed call without it was counted as 0 tokens (breaker11 F2, /v1/completions).
  if ((protocol === 'openai-chat' || protocol === 'openai-completions') && stream)
    out.stream_options = { ...((body.stream_options as object | undefined) ?? {}), include_usage: true };
  if (target.provider === 'openrouter')
    out.usage = { ...((body.usage as object | undefined) ?? {}), include: true };
  return out;
}
