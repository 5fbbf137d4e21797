/**
 * OpenAI Responses (`POST /v1/responses`), as OpenAI's API reference and the
 * Codex CLI read it: a `response` object, or named server-sent events
 * (`response.created`, `response.output_item.added`, `response.output_text.delta`,
 * `response.function_call_arguments.delta`, `response.output_item.done`,
 * `response.completed`, ... each with its `sequence_number`). Stateless use only:
 * `previous_response_id` is refused (berth keeps no conversation state).
 *
 * Free-form tools (`type: "custom"`, Codex's `apply_patch`) have no counterpart
 * in other APIs: translated, each becomes a function taking one string
 * argument `input`, and its calls come back as `custom_tool_call` items.
 */
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
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
  usageToV3,
} from '../types.ts';
import {
  array,
  epochSeconds,
  filePartFromUrl,
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
import { openaiChatCodec, providerCostOf, toolChoice } from './openai-chat.ts';

type AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number];
type UserPart = Extract<LanguageModelV3Message, { role: 'user' }>['content'][number];
type ToolResultPart = Extract<LanguageModelV3Message, { role: 'tool' }>['content'][number];

function partsText(content: unknown, field: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return array(content, field)
    .map((p, i) => {
      const part = object(p, `${field}[${i}]`);
      return typeof part.text === 'string' ? part.text : '';
    })
    .join('');
}

function userContent(content: unknown, field: string): UserPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, field).map((p, i) => {
    const part = object(p, `${field}[${i}]`);
    if (part.type === 'input_text' || part.type === 'text' || part.type === 'output_text')
      return { type: 'text', text: String(part.text ?? '') };
    if (part.type === 'input_image' && typeof part.image_url === 'string')
      return filePartFromUrl(part.image_url, `${field}[${i}].image_url`);
    throw new GatewayRequestError(
      400,
      `\`${field}[${i}].type\` ${JSON.stringify(part.type)} is not supported`,
    );
  });
}

function responsesMessages(instructions: unknown, input: unknown): LanguageModelV3Message[] {
  const out: LanguageModelV3Message[] = [];
  const system = optionalString(instructions, 'instructions');
  if (system) out.push({ role: 'system', content: system });
  if (typeof input === 'string') {
    out.push({ role: 'user', content: [{ type: 'text', text: input }] });
    return out;
  }
  const toolNames = new Map<string, string>();
  const assistant = (): AssistantPart[] => {
    const last = out.at(-1);
    if (last?.role === 'assistant') return last.content;
    const content: AssistantPart[] = [];
    out.push({ role: 'assistant', content });
    return content;
  };
  const tool = (part: ToolResultPart) => {
    const last = out.at(-1);
    if (last?.role === 'tool') last.content.push(part);
    else out.push({ role: 'tool', content: [part] });
  };
  array(input, 'input').forEach((raw, i) => {
    const field = `input[${i}]`;
    const item = object(raw, field);
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (item.role === 'system' || item.role === 'developer')
        out.push({ role: 'system', content: partsText(item.content, `${field}.content`) });
      else if (item.role === 'user')
        out.push({ role: 'user', content: userContent(item.content, `${field}.content`) });
      else if (item.role === 'assistant') {
        const text = partsText(item.content, `${field}.content`);
        if (text !== '') assistant().push({ type: 'text', text });
      } else
        throw new GatewayRequestError(400, `\`${field}.role\` ${JSON.stringify(item.role)} is not supported`);
    } else if (type === 'reasoning') {
      const text = array(item.summary ?? [], `${field}.summary`)
        .map((s) => String((s as Json).text ?? ''))
        .join('\n');
      assistant().push({
        type: 'reasoning',
        text,
        providerOptions: {
          openai: {
            itemId: String(item.id ?? ''),
            ...(typeof item.encrypted_content === 'string'
              ? { reasoningEncryptedContent: item.encrypted_content }
              : {}),
          },
        },
      });
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const id = String(item.call_id ?? item.id ?? `call_${i}`);
      const name = String(item.name ?? '');
      toolNames.set(id, name);
      assistant().push({
        type: 'tool-call',
        toolCallId: id,
        toolName: name,
        input:
          type === 'custom_tool_call'
            ? JSON.stringify({ input: String(item.input ?? '') })
            : inputText(item.arguments),
      });
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const id = String(item.call_id ?? '');
      tool({
        type: 'tool-result',
        toolCallId: id,
        toolName: toolNames.get(id) ?? '',
        output: { type: 'text', value: partsText(item.output, `${field}.output`) },
      });
    } else if (type === 'local_shell_call') {
      const id = String(item.call_id ?? item.id ?? `call_${i}`);
      toolNames.set(id, 'local_shell');
      assistant().push({
        type: 'tool-call',
        toolCallId: id,
        toolName: 'local_shell',
        input: JSON.stringify(item.action ?? {}),
      });
    } else if (type === 'local_shell_call_output') {
      const id = String(item.call_id ?? '');
      tool({
        type: 'tool-result',
        toolCallId: id,
        toolName: 'local_shell',
        output: { type: 'text', value: partsText(item.output, `${field}.output`) },
      });
    } else if (type === 'item_reference') {
      throw new GatewayRequestError(
        400,
        `\`${field}\`: item references need stored responses, which berth does not keep`,
      );
    } else {
      throw new GatewayRequestError(400, `\`${field}.type\` ${JSON.stringify(type)} is not supported`);
    }
  });
  return out;
}

const CUSTOM_INPUT_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The raw input of this free-form tool.' } },
  required: ['input'],
  additionalProperties: false,
} as JSONSchema7;

function responsesTools(
  tools: unknown[],
  warnings: string[],
  custom: string[],
): LanguageModelV3FunctionTool[] {
  const out: LanguageModelV3FunctionTool[] = [];
  tools.forEach((raw, i) => {
    const t = object(raw, `tools[${i}]`);
    if (t.type === 'function') {
      const name = optionalString(t.name, `tools[${i}].name`);
      if (!name) throw new GatewayRequestError(400, `\`tools[${i}]\` has no name`);
      out.push({
        type: 'function',
        name,
        ...(typeof t.description === 'string' ? { description: t.description } : {}),
        inputSchema: (t.parameters ?? { type: 'object', properties: {} }) as JSONSchema7,
      });
    } else if (t.type === 'custom') {
      const name = String(t.name ?? '');
      custom.push(name);
      const format = t.format as Json | undefined;
      const grammar =
        typeof format?.definition === 'string'
          ? `\nInput grammar (${String(format.syntax ?? '')}):\n${format.definition}`
          : '';
      out.push({
        type: 'function',
        name,
        description: `${String(t.description ?? '')}${grammar}`,
        inputSchema: CUSTOM_INPUT_SCHEMA,
      });
    } else if (t.type === 'local_shell') {
      out.push({
        type: 'function',
        name: 'local_shell',
        description: 'Runs a command: `command` is the argv list.',
        inputSchema: {
          type: 'object',
          properties: {
            command: { type: 'array', items: { type: 'string' } },
            workdir: { type: 'string' },
            timeout_ms: { type: 'number' },
          },
          required: ['command'],
        } as JSONSchema7,
      });
    } else warnings.push(`tool ${JSON.stringify(t.name ?? t.type)} (${String(t.type)}) left out`);
  });
  return out;
}

function responsesUsage(usage: LanguageModelV3Usage): Json {
  const input = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.inputTokens.cacheRead ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.outputTokens.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

/** Usage of a Responses `usage` object. */
export function readResponsesUsage(raw: Json | undefined): LanguageModelV3Usage {
  return usageToV3({
    inputTokens: Number(raw?.input_tokens ?? 0) || 0,
    cachedTokens: Number((raw?.input_tokens_details as Json | undefined)?.cached_tokens ?? 0) || 0,
    cacheWriteTokens: 0,
    outputTokens: Number(raw?.output_tokens ?? 0) || 0,
    reasoningTokens: Number((raw?.output_tokens_details as Json | undefined)?.reasoning_tokens ?? 0) || 0,
  });
}

function customNames(request?: ParsedRequest): Set<string> {
  const names = request?.hints?.customTools;
  return new Set(Array.isArray(names) ? (names as string[]) : []);
}

/** An output item for one answer part. */
function outputItem(part: LanguageModelV3Content, custom: Set<string>): Json | undefined {
  if (part.type === 'text')
    return {
      id: newId('msg_'),
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: part.text, annotations: [] }],
    };
  if (part.type === 'reasoning')
    return {
      id: newId('rs_'),
      type: 'reasoning',
      summary: part.text ? [{ type: 'summary_text', text: part.text }] : [],
    };
  if (part.type === 'tool-call') {
    if (custom.has(part.toolName)) {
      const value = inputValue(part.input) as Json;
      return {
        id: newId('ctc_'),
        type: 'custom_tool_call',
        status: 'completed',
        call_id: part.toolCallId,
        name: part.toolName,
        input: typeof value?.input === 'string' ? value.input : inputText(part.input),
      };
    }
    return {
      id: newId('fc_'),
      type: 'function_call',
      status: 'completed',
      call_id: part.toolCallId,
      name: part.toolName,
      arguments: inputText(part.input),
    };
  }
  return undefined;
}

function responseObject(fields: {
  id: string;
  model: string;
  status: string;
  output: Json[];
  usage: Json | null;
  createdAt: number;
  incomplete?: string;
}): Json {
  return {
    id: fields.id,
    object: 'response',
    created_at: fields.createdAt,
    status: fields.status,
    error: null,
    incomplete_details: fields.incomplete ? { reason: fields.incomplete } : null,
    instructions: null,
    max_output_tokens: null,
    model: fields.model,
    output: fields.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: fields.usage,
    user: null,
    metadata: {},
  };
}

function statusOf(reason: LanguageModelV3FinishReason): { status: string; incomplete?: string } {
  if (reason.unified === 'length') return { status: 'incomplete', incomplete: 'max_output_tokens' };
  if (reason.unified === 'content-filter') return { status: 'incomplete', incomplete: 'content_filter' };
  return { status: 'completed' };
}

class ResponsesStreamEncoder implements StreamEncoder {
  private readonly id = newId('resp_');
  private readonly createdAt = epochSeconds();
  private sequence = 0;
  private started = false;
  private output: Json[] = [];
  /** Open items by the AI SDK part id. */
  private open = new Map<string, { index: number; item: Json; text: string; custom: boolean }>();
  private toolIds = new Set<string>();
  private finished: { reason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage } | undefined;

  constructor(
    private readonly model: string,
    private readonly custom: Set<string>,
  ) {}

  private event(type: string, data: Json): string {
    return sse({ type, sequence_number: this.sequence++, ...data }, type);
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = responseObject({
      id: this.id,
      model: this.model,
      status: 'in_progress',
      output: [],
      usage: null,
      createdAt: this.createdAt,
    });
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private add(key: string, item: Json, custom = false): string {
    const index = this.output.length;
    this.output.push(item);
    this.open.set(key, { index, item, text: '', custom });
    return this.event('response.output_item.added', { output_index: index, item: { ...item } });
  }

  private done(key: string): string {
    const open = this.open.get(key);
    if (!open) return '';
    this.open.delete(key);
    const { index, item, text } = open;
    let out = '';
    if (item.type === 'message') {
      const part = { type: 'output_text', text, annotations: [] };
      out += this.event('response.output_text.done', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        text,
        logprobs: [],
      });
      out += this.event('response.content_part.done', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part,
      });
      item.content = [part];
      item.status = 'completed';
    } else if (item.type === 'reasoning') {
      const part = { type: 'summary_text', text };
      out += this.event('response.reasoning_summary_text.done', {
        item_id: item.id,
        output_index: index,
        summary_index: 0,
        text,
      });
      out += this.event('response.reasoning_summary_part.done', {
        item_id: item.id,
        output_index: index,
        summary_index: 0,
        part,
      });
      item.summary = [part];
    } else if (item.type === 'function_call') {
      const args = text === '' ? '{}' : text;
      out += this.event('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        arguments: args,
      });
      item.arguments = args;
      item.status = 'completed';
    } else if (item.type === 'custom_tool_call') {
      const value = inputValue(text) as Json;
      const input = typeof value?.input === 'string' ? value.input : text;
      out += this.event('response.custom_tool_call_input.done', {
        item_id: item.id,
        output_index: index,
        input,
      });
      item.input = input;
      item.status = 'completed';
    }
    return out + this.event('response.output_item.done', { output_index: index, item: { ...item } });
  }

  part(part: LanguageModelV3StreamPart): string {
    let out = this.start();
    switch (part.type) {
      case 'text-start': {
        const item = {
          id: newId('msg_'),
          type: 'message',
          status: 'in_progress',
          role: 'assistant',
          content: [],
        };
        out += this.add(part.id, item);
        out += this.event('response.content_part.added', {
          item_id: item.id,
          output_index: this.output.length - 1,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [] },
        });
        break;
      }
      case 'text-delta': {
        if (!this.open.has(part.id)) out += this.part({ type: 'text-start', id: part.id });
        const open = this.open.get(part.id);
        if (!open || part.delta === '') break;
        open.text += part.delta;
        out += this.event('response.output_text.delta', {
          item_id: open.item.id,
          output_index: open.index,
          content_index: 0,
          delta: part.delta,
          logprobs: [],
        });
        break;
      }
      case 'text-end':
      case 'reasoning-end':
        out += this.done(part.id);
        break;
      case 'reasoning-start': {
        const item = { id: newId('rs_'), type: 'reasoning', summary: [] };
        out += this.add(part.id, item);
        out += this.event('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: this.output.length - 1,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
        break;
      }
      case 'reasoning-delta': {
        if (!this.open.has(part.id)) out += this.part({ type: 'reasoning-start', id: part.id });
        const open = this.open.get(part.id);
        if (!open || part.delta === '') break;
        open.text += part.delta;
        out += this.event('response.reasoning_summary_text.delta', {
          item_id: open.item.id,
          output_index: open.index,
          summary_index: 0,
          delta: part.delta,
        });
        break;
      }
      case 'tool-input-start': {
        this.toolIds.add(part.id);
        const custom = this.custom.has(part.toolName);
        const item = custom
          ? {
              id: newId('ctc_'),
              type: 'custom_tool_call',
              status: 'in_progress',
              call_id: part.id,
              name: part.toolName,
              input: '',
            }
          : {
              id: newId('fc_'),
              type: 'function_call',
              status: 'in_progress',
              call_id: part.id,
              name: part.toolName,
              arguments: '',
            };
        out += this.add(part.id, item, custom);
        break;
      }
      case 'tool-input-delta': {
        const open = this.open.get(part.id);
        if (!open || part.delta === '') break;
        open.text += part.delta;
        // A custom tool's input is a JSON object here: its deltas cannot be passed on as raw input.
        if (!open.custom)
          out += this.event('response.function_call_arguments.delta', {
            item_id: open.item.id,
            output_index: open.index,
            delta: part.delta,
          });
        break;
      }
      case 'tool-input-end':
        break;
      case 'tool-call': {
        if (!this.toolIds.has(part.toolCallId)) {
          this.toolIds.add(part.toolCallId);
          out += this.part({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName });
          const open = this.open.get(part.toolCallId);
          if (open) {
            open.text = inputText(part.input);
            if (!open.custom)
              out += this.event('response.function_call_arguments.delta', {
                item_id: open.item.id,
                output_index: open.index,
                delta: open.text,
              });
          }
        }
        out += this.done(part.toolCallId);
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
    for (const key of [...this.open.keys()]) out += this.done(key);
    const { status, incomplete } = statusOf(this.finished?.reason ?? finish('stop'));
    const response = responseObject({
      id: this.id,
      model: this.model,
      status,
      output: this.output,
      usage: this.finished ? responsesUsage(this.finished.usage) : null,
      createdAt: this.createdAt,
      ...(incomplete ? { incomplete } : {}),
    });
    return (
      out + this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response })
    );
  }
}

class ResponsesAnswerReader implements AnswerReader {
  private final: Json | undefined;
  private items: Json[] = [];

  event(name: string | undefined, data: string): void {
    const e = JSON.parse(data) as Json;
    const type = e.type ?? name;
    if (type === 'response.output_item.done')
      this.items[Number(e.output_index ?? this.items.length)] = e.item as Json;
    else if (type === 'response.completed' || type === 'response.incomplete') this.final = e.response as Json;
    else if (type === 'response.failed' || type === 'error')
      throw new Error(
        `upstream stream error: ${JSON.stringify((e.response as Json | undefined)?.error ?? e).slice(0, 500)}`,
      );
  }

  answer(): ModelAnswer {
    const response = this.final ?? { output: this.items.filter(Boolean) };
    return readResponse(response);
  }

  providerCost(): number | undefined {
    return providerCostOf(this.final?.usage);
  }
}

function readResponse(response: Json): ModelAnswer {
  const content: LanguageModelV3Content[] = [];
  for (const item of (response.output as Json[] | undefined) ?? []) {
    if (item.type === 'message') {
      const text = partsText(item.content, 'output.content');
      if (text) content.push({ type: 'text', text });
    } else if (item.type === 'reasoning') {
      const text = ((item.summary as Json[] | undefined) ?? []).map((s) => String(s.text ?? '')).join('\n');
      content.push({ type: 'reasoning', text });
    } else if (item.type === 'function_call')
      content.push({
        type: 'tool-call',
        toolCallId: String(item.call_id),
        toolName: String(item.name),
        input: inputText(item.arguments),
      });
    else if (item.type === 'custom_tool_call')
      content.push({
        type: 'tool-call',
        toolCallId: String(item.call_id),
        toolName: String(item.name),
        input: JSON.stringify({ input: String(item.input ?? '') }),
      });
  }
  const incomplete = (response.incomplete_details as Json | null | undefined)?.reason;
  const finishReason =
    incomplete === 'max_output_tokens'
      ? finish('length', String(incomplete))
      : incomplete === 'content_filter'
        ? finish('content-filter', String(incomplete))
        : content.some((c) => c.type === 'tool-call')
          ? finish('tool-calls')
          : finish('stop', typeof response.status === 'string' ? response.status : undefined);
  return {
    content,
    finishReason,
    usage: readResponsesUsage(response.usage as Json | undefined),
    ...(typeof response.id === 'string' ? { id: response.id } : {}),
  };
}

export const openaiResponsesCodec: ProtocolCodec = {
  protocol: 'openai-responses',

  parseRequest(body: unknown): ParsedRequest {
    const b = object(body, 'body');
    if (b.previous_response_id)
      throw new GatewayRequestError(
        400,
        '`previous_response_id` needs stored responses, which berth does not keep; send the whole input',
      );
    const warnings: string[] = [];
    const custom: string[] = [];
    const maxTokens = optionalNumber(b.max_output_tokens, 'max_output_tokens');
    const temperature = optionalNumber(b.temperature, 'temperature');
    const topP = optionalNumber(b.top_p, 'top_p');
    const tools = b.tools ? responsesTools(array(b.tools, 'tools'), warnings, custom) : [];
    const choice = toolChoice(b.tool_choice);
    const reasoning = b.reasoning as Json | undefined;
    const call: LanguageModelV3CallOptions = {
      prompt: responsesMessages(b.instructions, b.input ?? []),
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { topP } : {}),
      ...(tools.length > 0 ? { tools } : {}),
      ...(choice ? { toolChoice: choice } : {}),
      ...(typeof reasoning?.effort === 'string'
        ? { providerOptions: { openai: { reasoningEffort: reasoning.effort } } }
        : {}),
    };
    return {
      call,
      stream: b.stream === true,
      requestedModel: String(b.model ?? ''),
      ...(custom.length > 0 ? { hints: { customTools: custom } } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  },

  renderAnswer(answer: ModelAnswer, model: string, request?: ParsedRequest): unknown {
    const custom = customNames(request);
    const output = answer.content
      .map((part) => outputItem(part, custom))
      .filter((x): x is Json => x !== undefined);
    const { status, incomplete } = statusOf(answer.finishReason);
    return responseObject({
      id: answer.id?.startsWith('resp_') ? answer.id : newId('resp_'),
      model,
      status,
      output,
      usage: responsesUsage(answer.usage),
      createdAt: epochSeconds(),
      ...(incomplete ? { incomplete } : {}),
    });
  },

  streamEncoder(model: string, request?: ParsedRequest): StreamEncoder {
    return new ResponsesStreamEncoder(model, customNames(request));
  },

  readAnswer(body: unknown) {
    const b = object(body, 'response');
    const cost = providerCostOf(b.usage);
    return { answer: readResponse(b), ...(cost !== undefined ? { providerCost: cost } : {}) };
  },

  answerReader(): AnswerReader {
    return new ResponsesAnswerReader();
  },

  errorBody: openaiChatCodec.errorBody,
};
