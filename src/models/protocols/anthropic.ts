/**
 * Anthropic Messages (`POST /v1/messages`), as Anthropic's API reference and
 * its SDKs (which Claude Code bundles) read it: a JSON `message`, or named
 * server-sent events `message_start`, `content_block_start`,
 * `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`,
 * `signature_delta`), `content_block_stop`, `message_delta` (stop reason and
 * usage) and `message_stop`. Anthropic's `input_tokens` excludes cache reads and
 * writes; berth's input count adds them.
 */
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3StreamPart,
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
} from '../types.ts';
import {
  array,
  finish,
  inputText,
  inputValue,
  type Json,
  newId,
  object,
  optionalNumber,
  optionalString,
  sse,
} from './common.ts';

type AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number];
type UserPart = Extract<LanguageModelV3Message, { role: 'user' }>['content'][number];
type ToolResultPart = Extract<LanguageModelV3Message, { role: 'tool' }>['content'][number];

function blocks(content: unknown, field: string): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, field).map((block, i) => object(block, `${field}[${i}]`));
}

function toolResultText(content: unknown, field: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return blocks(content, field)
    .map((b) => (b.type === 'text' ? String(b.text ?? '') : `[${String(b.type)} omitted]`))
    .join('\n');
}

function imagePart(block: Json, field: string): UserPart {
  const source = object(block.source, `${field}.source`);
  if (source.type === 'base64')
    return {
      type: 'file',
      mediaType: String(source.media_type ?? 'image/png'),
      data: String(source.data ?? ''),
    };
  if (source.type === 'url') return { type: 'file', mediaType: 'image/*', data: new URL(String(source.url)) };
  throw new GatewayRequestError(
    400,
    `\`${field}.source.type\` ${JSON.stringify(source.type)} is not supported`,
  );
}

function anthropicMessages(system: unknown, messages: unknown[]): LanguageModelV3Message[] {
  const out: LanguageModelV3Message[] = [];
  if (system !== undefined && system !== null) {
    const text = typeof system === 'string' ? system : toolResultText(system, 'system');
    if (text !== '') out.push({ role: 'system', content: text });
  }
  const toolNames = new Map<string, string>();
  messages.forEach((raw, i) => {
    const field = `messages[${i}]`;
    const m = object(raw, field);
    const parts = blocks(m.content, `${field}.content`);
    if (m.role === 'assistant') {
      const content: AssistantPart[] = [];
      parts.forEach((b, j) => {
        if (b.type === 'text') content.push({ type: 'text', text: String(b.text ?? '') });
        else if (b.type === 'thinking')
          content.push({
            type: 'reasoning',
            text: String(b.thinking ?? ''),
            ...(typeof b.signature === 'string'
              ? { providerOptions: { anthropic: { signature: b.signature } } }
              : {}),
          });
        else if (b.type === 'redacted_thinking')
          content.push({
            type: 'reasoning',
            text: '',
            providerOptions: { anthropic: { redactedData: String(b.data ?? '') } },
          });
        else if (b.type === 'tool_use' || b.type === 'server_tool_use') {
          const id = String(b.id ?? `toolu_${i}_${j}`);
          toolNames.set(id, String(b.name ?? ''));
          content.push({
            type: 'tool-call',
            toolCallId: id,
            toolName: String(b.name ?? ''),
            input: inputText(b.input),
          });
        }
      });
      out.push({ role: 'assistant', content });
    } else if (m.role === 'user') {
      const results: ToolResultPart[] = [];
      const content: UserPart[] = [];
      parts.forEach((b, j) => {
        const at = `${field}.content[${j}]`;
        if (b.type === 'tool_result') {
          const id = String(b.tool_use_id ?? '');
          const text = toolResultText(b.content, `${at}.content`);
          results.push({
            type: 'tool-result',
            toolCallId: id,
            toolName: toolNames.get(id) ?? '',
            output: b.is_error === true ? { type: 'error-text', value: text } : { type: 'text', value: text },
          });
        } else if (b.type === 'text') content.push({ type: 'text', text: String(b.text ?? '') });
        else if (b.type === 'image') content.push(imagePart(b, at));
        else if (b.type === 'document') content.push({ type: 'text', text: toolResultText(b.source, at) });
        else throw new GatewayRequestError(400, `\`${at}.type\` ${JSON.stringify(b.type)} is not supported`);
      });
      if (results.length > 0) out.push({ role: 'tool', content: results });
      if (content.length > 0) out.push({ role: 'user', content });
    } else if (m.role === 'system') {
      // Claude Code 2.1 sends system messages between the turns (its agent list, reminders).
      const text = typeof m.content === 'string' ? m.content : toolResultText(m.content, `${field}.content`);
      if (text !== '') out.push({ role: 'system', content: text });
    } else throw new GatewayRequestError(400, `\`${field}.role\` ${JSON.stringify(m.role)} is not supported`);
  });
  return out;
}

function anthropicTools(tools: unknown[], warnings: string[]): LanguageModelV3FunctionTool[] {
  const out: LanguageModelV3FunctionTool[] = [];
  tools.forEach((raw, i) => {
    const t = object(raw, `tools[${i}]`);
    if (t.type !== undefined && t.type !== 'custom') {
      warnings.push(`server tool ${JSON.stringify(t.name ?? t.type)} (${String(t.type)}) left out`);
      return;
    }
    const name = optionalString(t.name, `tools[${i}].name`);
    if (!name) throw new GatewayRequestError(400, `\`tools[${i}]\` has no name`);
    const description = optionalString(t.description, `tools[${i}].description`);
    out.push({
      type: 'function',
      name,
      ...(description ? { description } : {}),
      inputSchema: (t.input_schema ?? { type: 'object', properties: {} }) as JSONSchema7,
    });
  });
  return out;
}

function anthropicToolChoice(value: unknown): LanguageModelV3ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  const v = object(value, 'tool_choice');
  if (v.type === 'auto') return { type: 'auto' };
  if (v.type === 'any') return { type: 'required' };
  if (v.type === 'none') return { type: 'none' };
  if (v.type === 'tool' && typeof v.name === 'string') return { type: 'tool', toolName: v.name };
  return undefined;
}

function stopReason(reason: LanguageModelV3FinishReason, hasTools: boolean): string {
  if (reason.raw === 'stop_sequence' || reason.raw === 'pause_turn' || reason.raw === 'refusal')
    return reason.raw;
  switch (reason.unified) {
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    default:
      return hasTools ? 'tool_use' : 'end_turn';
  }
}

function anthropicUsage(usage: LanguageModelV3Usage): Json {
  const read = usage.inputTokens.cacheRead ?? 0;
  const written = usage.inputTokens.cacheWrite ?? 0;
  const total = usage.inputTokens.total ?? 0;
  return {
    input_tokens: Math.max(0, total - read - written),
    output_tokens: usage.outputTokens.total ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

/** Usage of an Anthropic `usage` object (input excludes the cache; berth adds it). */
export function readAnthropicUsage(raw: Json | undefined): LanguageModelV3Usage {
  const input = Number(raw?.input_tokens ?? 0) || 0;
  const read = Number(raw?.cache_read_input_tokens ?? 0) || 0;
  const written = Number(raw?.cache_creation_input_tokens ?? 0) || 0;
  return usageToV3({
    inputTokens: input + read + written,
    cachedTokens: read,
    cacheWriteTokens: written,
    outputTokens: Number(raw?.output_tokens ?? 0) || 0,
    reasoningTokens: 0,
  });
}

function readStop(raw: unknown, content: readonly LanguageModelV3Content[]): LanguageModelV3FinishReason {
  const r = typeof raw === 'string' ? raw : undefined;
  if (r === 'max_tokens' || r === 'model_context_window_exceeded') return finish('length', r);
  if (r === 'tool_use') return finish('tool-calls', r);
  if (r === 'refusal') return finish('content-filter', r);
  if (r === undefined && content.some((c) => c.type === 'tool-call')) return finish('tool-calls');
  return finish('stop', r);
}

class AnthropicStreamEncoder implements StreamEncoder {
  private readonly id = newId('msg_');
  private started = false;
  private next = 0;
  /** Open content blocks by the AI SDK part id. */
  private open = new Map<string, { index: number; kind: 'text' | 'thinking' | 'tool_use' }>();
  private toolIds = new Set<string>();
  private finished: { reason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage } | undefined;

  constructor(private readonly model: string) {}

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return sse(
      {
        type: 'message_start',
        message: {
          id: this.id,
          type: 'message',
          role: 'assistant',
          model: this.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 0,
            output_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        },
      },
      'message_start',
    );
  }

  private openBlock(id: string, kind: 'text' | 'thinking' | 'tool_use', block: Json): string {
    const index = this.next++;
    this.open.set(id, { index, kind });
    return sse({ type: 'content_block_start', index, content_block: block }, 'content_block_start');
  }

  private delta(index: number, delta: Json): string {
    return sse({ type: 'content_block_delta', index, delta }, 'content_block_delta');
  }

  private close(id: string): string {
    const block = this.open.get(id);
    if (!block) return '';
    this.open.delete(id);
    return sse({ type: 'content_block_stop', index: block.index }, 'content_block_stop');
  }

  part(part: LanguageModelV3StreamPart): string {
    let out = this.start();
    switch (part.type) {
      case 'text-start':
        out += this.openBlock(part.id, 'text', { type: 'text', text: '' });
        break;
      case 'text-delta': {
        if (!this.open.has(part.id)) out += this.openBlock(part.id, 'text', { type: 'text', text: '' });
        const block = this.open.get(part.id);
        if (block && part.delta !== '')
          out += this.delta(block.index, { type: 'text_delta', text: part.delta });
        break;
      }
      case 'text-end':
        out += this.close(part.id);
        break;
      case 'reasoning-start':
        out += this.openBlock(part.id, 'thinking', { type: 'thinking', thinking: '', signature: '' });
        break;
      case 'reasoning-delta': {
        if (!this.open.has(part.id))
          out += this.openBlock(part.id, 'thinking', { type: 'thinking', thinking: '', signature: '' });
        const block = this.open.get(part.id);
        if (block && part.delta !== '')
          out += this.delta(block.index, { type: 'thinking_delta', thinking: part.delta });
        break;
      }
      case 'reasoning-end': {
        const block = this.open.get(part.id);
        const signature = (part.providerMetadata?.anthropic as Json | undefined)?.signature;
        if (block && typeof signature === 'string')
          out += this.delta(block.index, { type: 'signature_delta', signature });
        out += this.close(part.id);
        break;
      }
      case 'tool-input-start':
        this.toolIds.add(part.id);
        out += this.openBlock(part.id, 'tool_use', {
          type: 'tool_use',
          id: part.id,
          name: part.toolName,
          input: {},
        });
        break;
      case 'tool-input-delta': {
        const block = this.open.get(part.id);
        if (block && part.delta !== '')
          out += this.delta(block.index, { type: 'input_json_delta', partial_json: part.delta });
        break;
      }
      case 'tool-input-end':
        out += this.close(part.id);
        break;
      case 'tool-call': {
        if (this.toolIds.has(part.toolCallId)) {
          out += this.close(part.toolCallId);
          break;
        }
        this.toolIds.add(part.toolCallId);
        out += this.openBlock(part.toolCallId, 'tool_use', {
          type: 'tool_use',
          id: part.toolCallId,
          name: part.toolName,
          input: {},
        });
        const block = this.open.get(part.toolCallId) as { index: number };
        out += this.delta(block.index, { type: 'input_json_delta', partial_json: inputText(part.input) });
        out += this.close(part.toolCallId);
        break;
      }
      case 'finish':
        this.finished = { reason: part.finishReason, usage: part.usage };
        break;
      default:
        break;
    }
    return out;
  }

  end(): string {
    let out = this.start();
    for (const id of [...this.open.keys()]) out += this.close(id);
    const reason = this.finished?.reason ?? finish('stop');
    const usage = this.finished ? anthropicUsage(this.finished.usage) : { output_tokens: 0 };
    out += sse(
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason(reason, this.toolIds.size > 0), stop_sequence: null },
        usage,
      },
      'message_delta',
    );
    out += sse({ type: 'message_stop' }, 'message_stop');
    return out;
  }
}

class AnthropicAnswerReader implements AnswerReader {
  private id: string | undefined;
  private blocks: Array<{ type: string; text: string; id?: string; name?: string; signature?: string }> = [];
  private usage: Json = {};
  private stop: unknown;

  event(name: string | undefined, data: string): void {
    const e = JSON.parse(data) as Json;
    const type = e.type ?? name;
    if (type === 'message_start') {
      const message = (e.message ?? {}) as Json;
      this.id = typeof message.id === 'string' ? message.id : undefined;
      this.usage = { ...((message.usage as Json | undefined) ?? {}) };
    } else if (type === 'content_block_start') {
      const block = (e.content_block ?? {}) as Json;
      const index = Number(e.index ?? this.blocks.length);
      this.blocks[index] = {
        type: String(block.type),
        text: String(block.text ?? block.thinking ?? ''),
        ...(typeof block.id === 'string' ? { id: block.id } : {}),
        ...(typeof block.name === 'string' ? { name: block.name } : {}),
      };
      if (block.type === 'tool_use' && block.input && Object.keys(block.input as Json).length > 0)
        (this.blocks[index] as { text: string }).text = JSON.stringify(block.input);
    } else if (type === 'content_block_delta') {
      const block = this.blocks[Number(e.index)];
      const delta = (e.delta ?? {}) as Json;
      if (!block) return;
      if (delta.type === 'text_delta') block.text += String(delta.text ?? '');
      else if (delta.type === 'thinking_delta') block.text += String(delta.thinking ?? '');
      else if (delta.type === 'input_json_delta') block.text += String(delta.partial_json ?? '');
      else if (delta.type === 'signature_delta') block.signature = String(delta.signature ?? '');
    } else if (type === 'message_delta') {
      const delta = (e.delta ?? {}) as Json;
      if (delta.stop_reason !== undefined) this.stop = delta.stop_reason;
      for (const [key, value] of Object.entries((e.usage as Json | undefined) ?? {}))
        if (value !== null && value !== undefined) this.usage[key] = value;
    } else if (type === 'error') {
      throw new Error(`upstream stream error: ${JSON.stringify(e.error ?? e).slice(0, 500)}`);
    }
  }

  answer(): ModelAnswer {
    const content: LanguageModelV3Content[] = [];
    for (const block of this.blocks) {
      if (!block) continue;
      if (block.type === 'text') content.push({ type: 'text', text: block.text });
      else if (block.type === 'thinking')
        content.push({
          type: 'reasoning',
          text: block.text,
          ...(block.signature ? { providerMetadata: { anthropic: { signature: block.signature } } } : {}),
        });
      else if (block.type === 'tool_use')
        content.push({
          type: 'tool-call',
          toolCallId: block.id ?? '',
          toolName: block.name ?? '',
          input: inputText(block.text),
        });
    }
    return {
      content,
      finishReason: readStop(this.stop, content),
      usage: readAnthropicUsage(this.usage),
      ...(this.id ? { id: this.id } : {}),
    };
  }

  providerCost(): undefined {
    return undefined;
  }
}

export const anthropicCodec: ProtocolCodec = {
  protocol: 'anthropic-messages',

  parseRequest(body: unknown): ParsedRequest {
    const b = object(body, 'body');
    const warnings: string[] = [];
    const maxTokens = optionalNumber(b.max_tokens, 'max_tokens');
    const temperature = optionalNumber(b.temperature, 'temperature');
    const topP = optionalNumber(b.top_p, 'top_p');
    const topK = optionalNumber(b.top_k, 'top_k');
    const tools = b.tools ? anthropicTools(array(b.tools, 'tools'), warnings) : [];
    const choice = anthropicToolChoice(b.tool_choice);
    const thinking = b.thinking as Json | undefined;
    const call: LanguageModelV3CallOptions = {
      prompt: anthropicMessages(b.system, array(b.messages, 'messages')),
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { topP } : {}),
      ...(topK !== undefined ? { topK } : {}),
      ...(Array.isArray(b.stop_sequences) ? { stopSequences: b.stop_sequences.map(String) } : {}),
      ...(tools.length > 0 ? { tools } : {}),
      ...(choice ? { toolChoice: choice } : {}),
      ...(thinking?.type === 'enabled'
        ? {
            providerOptions: {
              anthropic: {
                thinking: { type: 'enabled', budgetTokens: Number(thinking.budget_tokens ?? 1024) },
              },
            },
          }
        : {}),
    };
    return {
      call,
      stream: b.stream === true,
      requestedModel: String(b.model ?? ''),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  },

  renderAnswer(answer: ModelAnswer, model: string): unknown {
    const content: Json[] = [];
    for (const part of answer.content) {
      if (part.type === 'text') content.push({ type: 'text', text: part.text });
      else if (part.type === 'reasoning') {
        const signature = (part.providerMetadata?.anthropic as Json | undefined)?.signature;
        content.push({
          type: 'thinking',
          thinking: part.text,
          signature: typeof signature === 'string' ? signature : '',
        });
      } else if (part.type === 'tool-call')
        content.push({
          type: 'tool_use',
          id: part.toolCallId,
          name: part.toolName,
          input: inputValue(part.input),
        });
    }
    return {
      id: answer.id ?? newId('msg_'),
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason(
        answer.finishReason,
        content.some((c) => c.type === 'tool_use'),
      ),
      stop_sequence: null,
      usage: anthropicUsage(answer.usage),
    };
  },

  streamEncoder(model: string): StreamEncoder {
    return new AnthropicStreamEncoder(model);
  },

  readAnswer(body: unknown) {
    const b = object(body, 'response');
    const reader = new AnthropicAnswerReader();
    reader.event(
      'message_start',
      JSON.stringify({ type: 'message_start', message: { id: b.id, usage: b.usage } }),
    );
    ((b.content as Json[] | undefined) ?? []).forEach((block, index) => {
      reader.event(
        undefined,
        JSON.stringify({
          type: 'content_block_start',
          index,
          content_block: { ...block, input: undefined },
        }),
      );
      if (block.type === 'tool_use')
        reader.event(
          undefined,
          JSON.stringify({
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) },
          }),
        );
      if (typeof block.signature === 'string')
        reader.event(
          undefined,
          JSON.stringify({
            type: 'content_block_delta',
            index,
            delta: { type: 'signature_delta', signature: block.signature },
          }),
        );
    });
    reader.event(undefined, JSON.stringify({ type: 'message_delta', delta: { stop_reason: b.stop_reason } }));
    return { answer: reader.answer() };
  },

  answerReader(): AnswerReader {
    return new AnthropicAnswerReader();
  },

  errorBody(status: number, message: string, type?: string): unknown {
    const fallback =
      status === 401
        ? 'authentication_error'
        : status === 403
          ? 'permission_error'
          : status === 404
            ? 'not_found_error'
            : status === 429
              ? 'rate_limit_error'
              : status === 529
                ? 'overloaded_error'
                : status >= 500
                  ? 'api_error'
                  : 'invalid_request_error';
    return { type: 'error', error: { type: type ?? fallback, message } };
  },
};
