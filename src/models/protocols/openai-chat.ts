/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), as the OpenAI API
 * reference describes it and as OpenAI-compatible servers (vLLM, llama.cpp,
 * Ollama, OpenRouter) speak it: JSON answers, or server-sent events of
 * `chat.completion.chunk` objects ended by `data: [DONE]`, with the usage in a
 * last chunk whose `choices` is empty (`stream_options.include_usage`).
 * DeepSeek-style `reasoning_content` carries reasoning both ways.
 */
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3StreamPart,
  LanguageModelV3TextPart,
  LanguageModelV3ToolChoice,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import {
  type AnswerReader,
  GatewayRequestError,
  type ModelAnswer,
  type ParsedRequest,
  type ProtocolCodec,
  type StreamEncoder,
  usageToV3,
  ZERO_USAGE,
} from '../types.ts';
import {
  array,
  epochSeconds,
  filePartFromUrl,
  finish,
  inputText,
  type Json,
  newId,
  object,
  optionalNumber,
  optionalString,
  reasoningOf,
  sse,
  textOf,
  toolCalls,
} from './common.ts';

/** The text of a `content` that is a string or an array of `{type:'text', text}` parts. */
function contentText(content: unknown, field: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return array(content, field)
    .map((part, i) => {
      const p = object(part, `${field}[${i}]`);
      return p.type === 'text' || p.type === 'input_text' ? String(p.text ?? '') : '';
    })
    .join('');
}

function userParts(content: unknown, field: string): LanguageModelV3Message['content'] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: Array<LanguageModelV3TextPart | ReturnType<typeof filePartFromUrl>> = [];
  array(content ?? [], field).forEach((part, i) => {
    const p = object(part, `${field}[${i}]`);
    if (p.type === 'text') parts.push({ type: 'text', text: String(p.text ?? '') });
    else if (p.type === 'image_url') {
      const image = p.image_url;
      const url =
        typeof image === 'string' ? image : (object(image, `${field}[${i}].image_url`).url as string);
      parts.push(filePartFromUrl(String(url), `${field}[${i}].image_url.url`));
    } else
      throw new GatewayRequestError(
        400,
        `\`${field}[${i}].type\` ${JSON.stringify(p.type)} is not supported`,
      );
  });
  return parts;
}

/** The chat messages of a request in the AI SDK's terms. */
export function chatMessages(messages: unknown[]): LanguageModelV3Message[] {
  const out: LanguageModelV3Message[] = [];
  const toolNames = new Map<string, string>();
  messages.forEach((raw, i) => {
    const field = `messages[${i}]`;
    const m = object(raw, field);
    switch (m.role) {
      case 'system':
      case 'developer':
        out.push({ role: 'system', content: contentText(m.content, `${field}.content`) });
        break;
      case 'user':
        out.push({ role: 'user', content: userParts(m.content, `${field}.content`) as never });
        break;
      case 'assistant': {
        const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
        const reasoning = optionalString(m.reasoning_content ?? m.reasoning, `${field}.reasoning_content`);
        if (reasoning) content.push({ type: 'reasoning', text: reasoning });
        const text = contentText(m.content, `${field}.content`);
        if (text !== '') content.push({ type: 'text', text });
        array(m.tool_calls ?? [], `${field}.tool_calls`).forEach((call, j) => {
          const c = object(call, `${field}.tool_calls[${j}]`);
          const fn = object(c.function, `${field}.tool_calls[${j}].function`);
          const id = String(c.id ?? `call_${i}_${j}`);
          const name = String(fn.name ?? '');
          toolNames.set(id, name);
          content.push({ type: 'tool-call', toolCallId: id, toolName: name, input: inputText(fn.arguments) });
        });
        out.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const id = String(m.tool_call_id ?? '');
        const part = {
          type: 'tool-result' as const,
          toolCallId: id,
          toolName: toolNames.get(id) ?? '',
          output: { type: 'text' as const, value: contentText(m.content, `${field}.content`) },
        };
        // Consecutive tool messages answer one assistant turn: one AI SDK tool message.
        const last = out.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else out.push({ role: 'tool', content: [part] });
        break;
      }
      default:
        throw new GatewayRequestError(400, `\`${field}.role\` ${JSON.stringify(m.role)} is not supported`);
    }
  });
  return out;
}

/** OpenAI function tools (`{type:'function', function:{...}}` or the flat Responses form). */
export function functionTools(tools: unknown[], field: string): LanguageModelV3FunctionTool[] {
  return tools.map((tool, i) => {
    const t = object(tool, `${field}[${i}]`);
    if (t.type !== 'function')
      throw new GatewayRequestError(
        400,
        `\`${field}[${i}].type\` ${JSON.stringify(t.type)}: only function tools can be translated to this model's API`,
      );
    const fn = t.function ? object(t.function, `${field}[${i}].function`) : t;
    const name = optionalString(fn.name, `${field}[${i}].name`);
    if (!name) throw new GatewayRequestError(400, `\`${field}[${i}]\` has no name`);
    const description = optionalString(fn.description, `${field}[${i}].description`);
    return {
      type: 'function',
      name,
      ...(description ? { description } : {}),
      inputSchema: (fn.parameters ?? { type: 'object', properties: {} }) as JSONSchema7,
    };
  });
}

/** OpenAI's `tool_choice` (both APIs) in the AI SDK's terms. */
export function toolChoice(value: unknown): LanguageModelV3ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return { type: value };
  const v = object(value, 'tool_choice');
  const name = (v.function as Json | undefined)?.name ?? v.name;
  if (typeof name === 'string') return { type: 'tool', toolName: name };
  return undefined;
}

function chatFinishReason(reason: LanguageModelV3FinishReason): string {
  switch (reason.unified) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

function chatUsage(usage: LanguageModelV3Usage): Json {
  const input = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: usage.inputTokens.cacheRead ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.outputTokens.reasoning ?? 0 },
  };
}

/** Usage of an OpenAI-style `usage` object (both chat's and OpenRouter's). */
export function readChatUsage(raw: unknown): LanguageModelV3Usage {
  if (typeof raw !== 'object' || raw === null) return usageToV3(ZERO_USAGE);
  const u = raw as Json;
  const input = Number(u.prompt_tokens ?? 0) || 0;
  const cached = Number((u.prompt_tokens_details as Json | undefined)?.cached_tokens ?? 0) || 0;
  const output = Number(u.completion_tokens ?? 0) || 0;
  const reasoning = Number((u.completion_tokens_details as Json | undefined)?.reasoning_tokens ?? 0) || 0;
  return usageToV3({
    inputTokens: input,
    cachedTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: output,
    reasoningTokens: reasoning,
  });
}

/** OpenRouter's `usage.cost` (USD), when present. */
export function providerCostOf(usage: unknown): number | undefined {
  const cost = (usage as Json | undefined)?.cost;
  return typeof cost === 'number' && Number.isFinite(cost) ? cost : undefined;
}

function readFinish(raw: unknown, content: readonly LanguageModelV3Content[]): LanguageModelV3FinishReason {
  const r = typeof raw === 'string' ? raw : undefined;
  if (r === 'length') return finish('length', r);
  if (r === 'tool_calls' || r === 'function_call') return finish('tool-calls', r);
  if (r === 'content_filter') return finish('content-filter', r);
  if (r === undefined && content.some((c) => c.type === 'tool-call')) return finish('tool-calls');
  return finish(r === undefined || r === 'stop' ? 'stop' : 'other', r);
}

class ChatStreamEncoder implements StreamEncoder {
  private readonly id = newId('chatcmpl-');
  private readonly created = epochSeconds();
  private started = false;
  private toolIndex = new Map<string, number>();
  private finished: LanguageModelV3FinishReason | undefined;
  private usage: LanguageModelV3Usage | undefined;

  constructor(
    private readonly model: string,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: Json, finishReason: string | null = null): string {
    return sse({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    });
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  part(part: LanguageModelV3StreamPart): string {
    switch (part.type) {
      case 'text-delta':
        return part.delta === '' ? '' : this.start() + this.chunk({ content: part.delta });
      case 'reasoning-delta':
        return part.delta === '' ? '' : this.start() + this.chunk({ reasoning_content: part.delta });
      case 'tool-input-start': {
        const index = this.toolIndex.size;
        this.toolIndex.set(part.id, index);
        return (
          this.start() +
          this.chunk({
            tool_calls: [
              { index, id: part.id, type: 'function', function: { name: part.toolName, arguments: '' } },
            ],
          })
        );
      }
      case 'tool-input-delta': {
        const index = this.toolIndex.get(part.id);
        if (index === undefined || part.delta === '') return '';
        return this.chunk({ tool_calls: [{ index, function: { arguments: part.delta } }] });
      }
      case 'tool-call': {
        if (this.toolIndex.has(part.toolCallId)) return '';
        const index = this.toolIndex.size;
        this.toolIndex.set(part.toolCallId, index);
        return (
          this.start() +
          this.chunk({
            tool_calls: [
              {
                index,
                id: part.toolCallId,
                type: 'function',
                function: { name: part.toolName, arguments: inputText(part.input) },
              },
            ],
          })
        );
      }
      case 'finish':
        this.finished = part.finishReason;
        this.usage = part.usage;
        return '';
      default:
        return '';
    }
  }

  end(): string {
    let out = this.start();
    const reason = this.finished ? chatFinishReason(this.finished) : 'stop';
    out += this.chunk({}, this.toolIndex.size > 0 && reason === 'stop' ? 'tool_calls' : reason);
    if (this.includeUsage && this.usage)
      out += sse({
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.model,
        choices: [],
        usage: chatUsage(this.usage),
      });
    return `${out}data: [DONE]\n\n`;
  }
}

class ChatAnswerReader implements AnswerReader {
  private text = '';
  private reasoning = '';
  private calls: Array<{ id: string; name: string; args: string }> = [];
  private finishRaw: unknown;
  private usage: unknown;
  private id: string | undefined;

  event(_name: string | undefined, data: string): void {
    if (data.trim() === '[DONE]') return;
    const chunk = JSON.parse(data) as Json;
    if (chunk.error) throw new Error(`upstream stream error: ${JSON.stringify(chunk.error).slice(0, 500)}`);
    this.id ??= typeof chunk.id === 'string' ? chunk.id : undefined;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of (chunk.choices as Json[] | undefined) ?? []) {
      const delta = (choice.delta ?? {}) as Json;
      if (typeof delta.content === 'string') this.text += delta.content;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string') this.reasoning += reasoning;
      for (const call of (delta.tool_calls as Json[] | undefined) ?? []) {
        const index = typeof call.index === 'number' ? call.index : this.calls.length;
        const fn = (call.function ?? {}) as Json;
        this.calls[index] ??= { id: String(call.id ?? `call_${index}`), name: '', args: '' };
        const slot = this.calls[index];
        if (typeof call.id === 'string') slot.id = call.id;
        if (typeof fn.name === 'string') slot.name += fn.name;
        if (typeof fn.arguments === 'string') slot.args += fn.arguments;
      }
      if (choice.finish_reason) this.finishRaw = choice.finish_reason;
    }
  }

  answer(): ModelAnswer {
    const content: LanguageModelV3Content[] = [];
    if (this.reasoning) content.push({ type: 'reasoning', text: this.reasoning });
    if (this.text) content.push({ type: 'text', text: this.text });
    for (const call of this.calls.filter(Boolean))
      content.push({
        type: 'tool-call',
        toolCallId: call.id,
        toolName: call.name,
        input: inputText(call.args),
      });
    return {
      content,
      finishReason: readFinish(this.finishRaw, content),
      usage: readChatUsage(this.usage),
      ...(this.id ? { id: this.id } : {}),
    };
  }

  providerCost(): number | undefined {
    return providerCostOf(this.usage);
  }
}

export const openaiChatCodec: ProtocolCodec = {
  protocol: 'openai-chat',

  parseRequest(body: unknown): ParsedRequest {
    const b = object(body, 'body');
    const n = optionalNumber(b.n, 'n');
    if (n !== undefined && n !== 1) throw new GatewayRequestError(400, '`n` other than 1 is not supported');
    const stop =
      typeof b.stop === 'string' ? [b.stop] : Array.isArray(b.stop) ? b.stop.map(String) : undefined;
    const maxTokens = optionalNumber(b.max_completion_tokens ?? b.max_tokens, 'max_tokens');
    const temperature = optionalNumber(b.temperature, 'temperature');
    const topP = optionalNumber(b.top_p, 'top_p');
    const seed = optionalNumber(b.seed, 'seed');
    const presence = optionalNumber(b.presence_penalty, 'presence_penalty');
    const frequency = optionalNumber(b.frequency_penalty, 'frequency_penalty');
    const tools =
      b.tools === undefined || b.tools === null ? [] : functionTools(array(b.tools, 'tools'), 'tools');
    const choice = toolChoice(b.tool_choice);
    const format = b.response_format as Json | undefined;
    const call: LanguageModelV3CallOptions = {
      prompt: chatMessages(array(b.messages, 'messages')),
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { topP } : {}),
      ...(seed !== undefined ? { seed } : {}),
      ...(presence !== undefined ? { presencePenalty: presence } : {}),
      ...(frequency !== undefined ? { frequencyPenalty: frequency } : {}),
      ...(stop ? { stopSequences: stop } : {}),
      ...(tools.length > 0 ? { tools } : {}),
      ...(choice ? { toolChoice: choice } : {}),
      ...(format?.type === 'json_object' || format?.type === 'json_schema'
        ? {
            responseFormat: {
              type: 'json' as const,
              ...((format.json_schema as Json | undefined)?.schema
                ? { schema: (format.json_schema as Json).schema as JSONSchema7 }
                : {}),
            },
          }
        : {}),
    };
    return { call, stream: b.stream === true, requestedModel: String(b.model ?? '') };
  },

  renderAnswer(answer: ModelAnswer, model: string): unknown {
    const calls = toolCalls(answer.content);
    const reasoning = reasoningOf(answer.content);
    const text = textOf(answer.content);
    return {
      id: answer.id ?? newId('chatcmpl-'),
      object: 'chat.completion',
      created: epochSeconds(),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text === '' && calls.length > 0 ? null : text,
            ...(reasoning ? { reasoning_content: reasoning } : {}),
            ...(calls.length > 0
              ? {
                  tool_calls: calls.map((c) => ({
                    id: c.toolCallId,
                    type: 'function',
                    function: { name: c.toolName, arguments: inputText(c.input) },
                  })),
                }
              : {}),
          },
          finish_reason: chatFinishReason(answer.finishReason),
          logprobs: null,
        },
      ],
      usage: chatUsage(answer.usage),
    };
  },

  streamEncoder(model: string): StreamEncoder {
    return new ChatStreamEncoder(model, true);
  },

  readAnswer(body: unknown) {
    const b = object(body, 'response');
    const reader = new ChatAnswerReader();
    const choice = ((b.choices as Json[] | undefined) ?? [])[0] ?? {};
    const message = (choice.message ?? {}) as Json;
    reader.event(
      undefined,
      JSON.stringify({
        id: b.id,
        usage: b.usage,
        choices: [
          {
            delta: {
              content: message.content,
              reasoning_content: message.reasoning_content ?? message.reasoning,
              tool_calls: ((message.tool_calls as Json[] | undefined) ?? []).map((c, index) => ({
                ...c,
                index,
              })),
            },
            finish_reason: choice.finish_reason,
          },
        ],
      }),
    );
    const cost = reader.providerCost();
    return { answer: reader.answer(), ...(cost !== undefined ? { providerCost: cost } : {}) };
  },

  answerReader(): AnswerReader {
    return new ChatAnswerReader();
  },

  errorBody(status: number, message: string, type?: string): unknown {
    return {
      error: {
        message,
        type: type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
        param: null,
        code: null,
      },
    };
  },
};
