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
import { writeFileAtomic } from '../util/atomic-write.ts';
import { type PostprocessOptions, postprocess } from './postprocess.ts';
import type { Problem } from './types.ts';

export interface GenerateOptions {
  problems: Map<string, Problem>;
  model: string;
  /** e.g. http://127.0.0.1:8000/v1 */
  baseUrl: string;
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

export async function generate(options: GenerateOptions): Promise<GeneratedSample[]> {
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
  await Promise.all(
    jobs.map((job, index) =>
      queue.add(async () => {
        const { problem } = job;
        let text: string;
        let finish: string | null;
        if (options.chat) {
          const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
          if (options.system) messages.push({ role: 'system', content: options.system });
          messages.push({ role: 'user', content: problem.prompt });
          const response = await client.chat.completions.create({
            model: options.model,
            messages,
            temperature: options.temperature,
            max_tokens: options.maxTokens,
            ...(options.topP !== undefined ? { top_p: options.topP } : {}),
            ...(stop ? { stop } : {}),
          });
          text = response.choices[0]?.message?.content ?? '';
          finish = response.choices[0]?.finish_reason ?? null;
        } else {
          const response = await client.completions.create({
            model: options.model,
            prompt: problem.prompt,
            temperature: options.temperature,
            max_tokens: options.maxTokens,
            ...(options.topP !== undefined ? { top_p: options.topP } : {}),
            ...(stop ? { stop } : {}),
          });
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
  await writeFileAtomic(options.out, `${results.map((row) => JSON.stringify(row)).join('\n')}\n`);
  return results;
}
