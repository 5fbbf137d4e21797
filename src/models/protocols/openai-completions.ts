/**
 * OpenAI's legacy Completions (`POST /v1/completions`): a prompt continued as text, what
 * code models behind OpenAI-compatible servers (vLLM, llama.cpp) serve and `berth generate`
 * asks. JSON `text_completion` answers, or `data:` chunks ended by `data: [DONE]`. The
 * gateway only passes these through (a continuation has no counterpart in chat APIs).
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import {
  type AnswerReader,
  GatewayRequestError,
  type ModelAnswer,
  type ParsedRequest,
  type ProtocolCodec,
  type StreamEncoder,
} from '../types.ts';
import { epochSeconds, finish, type Json, newId, object, optionalNumber, sse, textOf } from './common.ts';
import { openaiChatCodec, providerCostOf, readChatUsage } from './openai-chat.ts';

function reasonOf(reason: LanguageModelV3FinishReason): string {
  return reason.unified === 'length' ? 'length' : 'stop';
}

function usageOf(usage: LanguageModelV3Usage): Json {
  const input = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

class CompletionsStreamEncoder implements StreamEncoder {
  private readonly id = newId('cmpl-');
  private readonly created = epochSeconds();
  private finished: { reason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage } | undefined;
  constructor(private readonly model: string) {}
  private chunk(text: string, reason: string | null, usage?: Json): string {
    return sse({
      id: this.id,
      object: 'text_completion',
      created: this.created,
      model: this.model,
      choices: [{ text, index: 0, logprobs: null, finish_reason: reason }],
      ...(usage ? { usage } : {}),
    });
  }
  part(part: LanguageModelV3StreamPart): string {
    if (part.type === 'text-delta' && part.delta !== '') return this.chunk(part.delta, null);
    if (part.type === 'finish') this.finished = { reason: part.finishReason, usage: part.usage };
    return '';
  }
  end(): string {
    const f = this.finished;
    return `${this.chunk('', f ? reasonOf(f.reason) : 'stop', f ? usageOf(f.usage) : undefined)}data: [DONE]\n\n`;
  }
}

class CompletionsReader implements AnswerReader {
  private text = '';
  private reason: unknown;
  private usage: unknown;
  private id: string | undefined;
  event(_name: string | undefined, data: string): void {
    if (data.trim() === '[DONE]') return;
    const chunk = JSON.parse(data) as Json;
    this.id ??= typeof chunk.id === 'string' ? chunk.id : undefined;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = ((chunk.choices as Json[] | undefined) ?? [])[0];
    if (typeof choice?.text === 'string') this.text += choice.text;
    if (choice?.finish_reason) this.reason = choice.finish_reason;
  }
  answer(): ModelAnswer {
    return {
      content: this.text ? [{ type: 'text', text: this.text }] : [],
      finishReason:
        this.reason === 'length'
          ? finish('length', 'length')
          : finish('stop', typeof this.reason === 'string' ? this.reason : undefined),
      usage: readChatUsage(this.usage),
      ...(this.id ? { id: this.id } : {}),
    };
  }
  providerCost(): number | undefined {
    return providerCostOf(this.usage);
  }
}

export const openaiCompletionsCodec: ProtocolCodec = {
  protocol: 'openai-completions',

  parseRequest(body: unknown): ParsedRequest {
    const b = object(body, 'body');
    if (typeof b.prompt !== 'string')
      throw new GatewayRequestError(400, '`prompt` must be one string (batched prompts are not supported)');
    const n = optionalNumber(b.n, 'n');
    if (n !== undefined && n !== 1) throw new GatewayRequestError(400, '`n` other than 1 is not supported');
    const maxTokens = optionalNumber(b.max_tokens, 'max_tokens');
    const temperature = optionalNumber(b.temperature, 'temperature');
    const topP = optionalNumber(b.top_p, 'top_p');
    const stop =
      typeof b.stop === 'string' ? [b.stop] : Array.isArray(b.stop) ? b.stop.map(String) : undefined;
    const call: LanguageModelV3CallOptions = {
      prompt: [{ role: 'user', content: [{ type: 'text', text: b.prompt }] }],
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { topP } : {}),
      ...(stop ? { stopSequences: stop } : {}),
    };
    return { call, stream: b.stream === true, requestedModel: String(b.model ?? '') };
  },

  renderAnswer(answer: ModelAnswer, model: string): unknown {
    return {
      id: answer.id ?? newId('cmpl-'),
      object: 'text_completion',
      created: epochSeconds(),
      model,
      choices: [
        {
          text: textOf(answer.content),
          index: 0,
          logprobs: null,
          finish_reason: reasonOf(answer.finishReason),
        },
      ],
      usage: usageOf(answer.usage),
    };
  },

  streamEncoder(model: string): StreamEncoder {
    return new CompletionsStreamEncoder(model);
  },

  readAnswer(body: unknown) {
    const reader = new CompletionsReader();
    reader.event(undefined, JSON.stringify(object(body, 'response')));
    const cost = reader.providerCost();
    return { answer: reader.answer(), ...(cost !== undefined ? { providerCost: cost } : {}) };
  },

  answerReader(): AnswerReader {
    return new CompletionsReader();
  },

  errorBody: openaiChatCodec.errorBody,
};
