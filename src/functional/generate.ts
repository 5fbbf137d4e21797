/**
 * `berth generate`: ask an OpenAI-compatible endpoint (vLLM, llama.cpp
 * server, Ollama, ...) for completions of every problem and write a samples
 * file (`task_id`, `completion`, `language`, plus the raw generation) that
 * `berth eval` reads.
 *
 * Every request goes through berth's model gateway (src/models/gateway.ts), as every model
 * call of berth does: the caller starts it and passes the session's base URL and token here;
 * the gateway adds the real key, retries, and counts tokens and cost.
 *
 * Completion endpoint (`/v1/completions`): the prompt is sent as is, the
 * answer continues it. Chat endpoint (`/v1/chat/completions`, `--chat`): the
 * prompt is the user message, preceded by an optional system message.
 * Requests: one per sample (some servers ignore `n`), `-n` in parallel, the
 * gateway's retries on 429/5xx.
 */
import OpenAI from 'openai';
import PQueue from 'p-queue';
import { BerthError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { type PostprocessOptions, postprocess } from './postprocess.ts';
import type { Problem } from './types.ts';

export interface GenerateOptions {
  problems: Map<string, Problem>;
  model: string;
  /** e.g. http://127.0.0.1:8000/v1 (berth's model gateway, for `berth generate`) */
  baseUrl: string;
  /** The endpoint as the user named it, for messages (default `baseUrl`). */
  endpoint?: string;
  apiKey?: string;
  /** Client retries (default 2; 0 behind the gateway, which retries itself). */
  maxRetries?: number;
  chat: boolean;
  system?: string;
  numSamples: number;
  temperature: number;
  maxTokens: number;
  topP?: number;
  /** Stop sequences sent to the endpoint (it cuts before them). */
  stop: string[];
  concurrency: number;
  /** Request timeout in seconds. */
  timeoutSec: number;
  postprocess: PostprocessOptions;
  out: string;
  /** Only these task ids (default all). */
  limit?: number;
  onSample?: (done: number, total: number) => void;
}

export interface GeneratedSample {
  task_id: string;
  completion: string;
  language: string;
  /** The endpoint's text before post-processing. */
  raw_generation: string;
  finish_reason: string | null;
}

/**
 * The endpoint cannot be used (unreachable, refused, unknown host, no such route or model, a
 * rejected key): bad input, exit 2, naming the URL and the cause. Not a bug in berth.
 */
export class EndpointError extends BerthError {
  constructor(url: string, cause: string, options?: { cause?: unknown }) {
    super('BERTH_ENDPOINT', `cannot use the endpoint ${url}: ${cause}`, {
      exitCode: 2,
      cause: options?.cause,
    });
  }
}

/** What made a request fail: its innermost cause (`connect ECONNREFUSED 127.0.0.1:8000`, `getaddrinfo ENOTFOUND x`). */
function describeCause(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (!(e instanceof Error)) {
      parts.push(String(e));
      break;
    }
    const code = (e as { code?: unknown }).code;
    const text = e.message.trim();
    if (text && !parts.includes(text)) parts.push(text);
    if (typeof code === 'string' && !parts.some((p) => p.includes(code))) parts.push(code);
  }
  // The innermost cause says what happened (`connect ECONNREFUSED 127.0.0.1:8000`); the outer ones
  // are the client's wrappers (`Connection error.`, `fetch failed`).
  return parts.at(-1) ?? 'unknown error';
}

/** A gateway's answer that it could not reach the upstream (connection refused, unknown host...). */
const GATEWAY_UNREACHABLE =
  /upstream[: ].*(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNRESET|ETIMEDOUT|fetch failed|Cannot connect|did not answer)/;

/** An OpenAI client error as berth reports it: the endpoint's fault (exit 2) or the run's (exit 1). */
function endpointFailure(error: unknown, url: string): Error {
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return new EndpointError(url, `no answer in time (${describeCause(error)})`, { cause: error });
  if (error instanceof OpenAI.APIConnectionError)
    return new EndpointError(url, `cannot connect: ${describeCause(error)}`, { cause: error });
  // Behind berth's model gateway the client reaches the gateway; an unreachable upstream comes
  // back as the gateway's 502/504 naming the cause.
  if (
    error instanceof OpenAI.APIError &&
    (error.status === 502 || error.status === 504) &&
    GATEWAY_UNREACHABLE.test(error.message)
  ) {
    const cause = /upstream[: ]+(.*)$/s.exec(error.message)?.[1]?.trim() ?? error.message;
    return new EndpointError(
      url,
      error.status === 504 ? `no answer in time (${cause})` : `cannot connect: ${cause}`,
      { cause: error },
    );
  }
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    const what = `HTTP ${error.status}: ${error.message.replace(/^\d+\s*/, '').slice(0, 300)}`;
    // 4xx: the URL, the model or the key is wrong; 5xx (after the client's retries): the server failed.
    if (error.status >= 400 && error.status < 500) return new EndpointError(url, what, { cause: error });
    return new BerthError('BERTH_ENDPOINT_FAILED', `the endpoint ${url} failed: ${what}`, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

export async function generate(options: GenerateOptions): Promise<GeneratedSample[]> {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new EndpointError(options.baseUrl, 'not a URL (expected e.g. http://127.0.0.1:8000/v1)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new EndpointError(options.baseUrl, `not an http(s) URL (${url.protocol})`);
  // The first failure stops the rest: queued requests are dropped, those in flight aborted.
  const abort = new AbortController();
  const client = new OpenAI({
    baseURL: options.baseUrl,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'not-needed',
    timeout: options.timeoutSec * 1000,
    // The gateway retries (it honours Retry-After); retrying here too would multiply the attempts.
    maxRetries: options.maxRetries ?? 2,
  });
  const problems = [...options.problems.values()].slice(0, options.limit ?? undefined);
  const jobs = problems.flatMap((problem) =>
    Array.from({ length: options.numSamples }, (_, i) => ({ problem, i })),
  );
  const results: GeneratedSample[] = new Array(jobs.length);
  const queue = new PQueue({ concurrency: options.concurrency });
  let done = 0;
  const stop = options.stop.length > 0 ? options.stop.slice(0, 4) : undefined;
  const requestOptions = { signal: abort.signal };
  const run = Promise.all(
    jobs.map((job, index) =>
      queue.add(async () => {
        const { problem } = job;
        let text: string;
        let finish: string | null;
        if (options.chat) {
          const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
          if (options.system) messages.push({ role: 'system', content: options.system });
          messages.push({ role: 'user', content: problem.prompt });
          const response = await client.chat.completions.create(
            {
              model: options.model,
              messages,
              temperature: options.temperature,
              max_tokens: options.maxTokens,
              ...(options.topP !== undefined ? { top_p: options.topP } : {}),
              ...(stop ? { stop } : {}),
            },
            requestOptions,
          );
          text = response.choices[0]?.message?.content ?? '';
          finish = response.choices[0]?.finish_reason ?? null;
        } else {
          const response = await client.completions.create(
            {
              model: options.model,
              prompt: problem.prompt,
              temperature: options.temperature,
              max_tokens: options.maxTokens,
              ...(options.topP !== undefined ? { top_p: options.topP } : {}),
              ...(stop ? { stop } : {}),
            },
            requestOptions,
          );
          text = response.choices[0]?.text ?? '';
          finish = response.choices[0]?.finish_reason ?? null;
        }
        results[index] = {
          task_id: problem.task_id,
          completion: postprocess(problem.prompt, text, options.postprocess),
          language: problem.language,
          raw_generation: text,
          finish_reason: finish,
        };
        options.onSample?.(++done, jobs.length);
      }),
    ),
  );
  try {
    await run;
  } catch (error) {
    queue.clear();
    abort.abort();
    throw endpointFailure(error, options.endpoint ?? options.baseUrl);
  }
  await writeFileAtomic(options.out, `${results.map((row) => JSON.stringify(row)).join('\n')}\n`);
  return results;
}
