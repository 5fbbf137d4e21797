/**
 * Google's Gemini API (`POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent`), as the Gemini API reference and `@google/genai`
 * (which Gemini CLI uses) read it: a `GenerateContentResponse`, or with
 * `?alt=sse` one `GenerateContentResponse` per `data:` frame (text in deltas,
 * each function call whole in one frame, `finishReason` and `usageMetadata`
 * on the last). Gemini's function calls may carry no id: berth numbers them and
 * pairs each `functionResponse` with the call of the same name, in order.
 * `candidatesTokenCount` excludes thoughts; berth's output count adds
 * `thoughtsTokenCount`.
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
import { array, finish, inputValue, type Json, newId, object, optionalNumber, sse } from './common.ts';

type AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number];
type UserPart = Extract<LanguageModelV3Message, { role: 'user' }>['content'][number];
type ToolResultPart = Extract<LanguageModelV3Message, { role: 'tool' }>['content'][number];

/** Gemini's OpenAPI-style schema (`type: "OBJECT"`) as JSON Schema (lower-case types). */
export function geminiSchemaToJson(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchemaToJson);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'nullable') continue;
    else out[key] = geminiSchemaToJson(value);
  }
  if ((schema as Json).nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function textOfParts(parts: Json[]): string {
  return parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

function geminiMessages(system: unknown, contents: unknown[]): LanguageModelV3Message[] {
  const out: LanguageModelV3Message[] = [];
  if (system !== undefined && system !== null) {
    const s =
      typeof system === 'string' ? { parts: [{ text: system }] } : object(system, 'systemInstruction');
    const text = textOfParts(array(s.parts ?? [], 'systemInstruction.parts') as Json[]);
    if (text !== '') out.push({ role: 'system', content: text });
  }
  /** Ids of the last model turn's calls not yet answered, by function name, in order. */
  const pending = new Map<string, string[]>();
  contents.forEach((raw, i) => {
    const field = `contents[${i}]`;
    const c = object(raw, field);
    const parts = array(c.parts ?? [], `${field}.parts`).map((p, j) => object(p, `${field}.parts[${j}]`));
    if (c.role === 'model') {
      const content: AssistantPart[] = [];
      pending.clear();
      parts.forEach((p, j) => {
        if (p.functionCall) {
          const call = object(p.functionCall, `${field}.parts[${j}].functionCall`);
          const name = String(call.name ?? '');
          const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${i}_${j}`;
          pending.set(name, [...(pending.get(name) ?? []), id]);
          content.push({
            type: 'tool-call',
            toolCallId: id,
            toolName: name,
            input: JSON.stringify(call.args ?? {}),
            ...(typeof p.thoughtSignature === 'string'
              ? { providerOptions: { google: { thoughtSignature: p.thoughtSignature } } }
              : {}),
          });
        } else if (typeof p.text === 'string') {
          content.push(
            p.thought === true
              ? { type: 'reasoning', text: p.text }
              : {
                  type: 'text',
                  text: p.text,
                  ...(typeof p.thoughtSignature === 'string'
                    ? { providerOptions: { google: { thoughtSignature: p.thoughtSignature } } }
                    : {}),
                },
          );
        }
      });
      out.push({ role: 'assistant', content });
    } else if (c.role === 'user' || c.role === undefined || c.role === 'function') {
      const results: ToolResultPart[] = [];
      const content: UserPart[] = [];
      parts.forEach((p, j) => {
        const at = `${field}.parts[${j}]`;
        if (p.functionResponse) {
          const response = object(p.functionResponse, `${at}.functionResponse`);
          const name = String(response.name ?? '');
          const queue = pending.get(name) ?? [];
          const id =
            typeof response.id === 'string' && response.id !== ''
              ? response.id
              : (queue.shift() ?? `call_${i}_${j}`);
          const value = response.response as Json | undefined;
          const output =
            value &&
            typeof value === 'object' &&
            Object.keys(value).length === 1 &&
            typeof value.output === 'string'
              ? { type: 'text' as const, value: value.output }
              : value && typeof value === 'object' && typeof value.error === 'string'
                ? { type: 'error-text' as const, value: value.error }
                : { type: 'json' as const, value: (value ?? {}) as never };
          results.push({ type: 'tool-result', toolCallId: id, toolName: name, output });
        } else if (typeof p.text === 'string') content.push({ type: 'text', text: p.text });
        else if (p.inlineData) {
          const data = object(p.inlineData, `${at}.inlineData`);
          content.push({
            type: 'file',
            mediaType: String(data.mimeType ?? 'application/octet-stream'),
            data: String(data.data ?? ''),
          });
        } else if (p.fileData) {
          const data = object(p.fileData, `${at}.fileData`);
          content.push({
            type: 'file',
            mediaType: String(data.mimeType ?? 'application/octet-stream'),
            data: new URL(String(data.fileUri)),
          });
        } else
          throw new GatewayRequestError(400, `\`${at}\`: part ${Object.keys(p).join(',')} is not supported`);
      });
      if (results.length > 0) out.push({ role: 'tool', content: results });
      if (content.length > 0) out.push({ role: 'user', content });
    } else throw new GatewayRequestError(400, `\`${field}.role\` ${JSON.stringify(c.role)} is not supported`);
  });
  return out;
}

function geminiTools(tools: unknown[], warnings: string[]): LanguageModelV3FunctionTool[] {
  const out: LanguageModelV3FunctionTool[] = [];
  tools.forEach((raw, i) => {
    const t = object(raw, `tools[${i}]`);
    for (const key of Object.keys(t)) {
      if (key !== 'functionDeclarations') warnings.push(`tool ${key} left out`);
    }
    array(t.functionDeclarations ?? [], `tools[${i}].functionDeclarations`).forEach((d, j) => {
      const decl = object(d, `tools[${i}].functionDeclarations[${j}]`);
      const schema = decl.parametersJsonSchema ??
        geminiSchemaToJson(decl.parameters) ?? { type: 'object', properties: {} };
      out.push({
        type: 'function',
        name: String(decl.name ?? ''),
        ...(typeof decl.description === 'string' ? { description: decl.description } : {}),
        inputSchema: schema as JSONSchema7,
      });
    });
  });
  return out;
}

function geminiToolChoice(config: unknown): LanguageModelV3ToolChoice | undefined {
  const fc = (config as Json | undefined)?.functionCallingConfig as Json | undefined;
  if (!fc) return undefined;
  const names = Array.isArray(fc.allowedFunctionNames) ? fc.allowedFunctionNames : [];
  if (fc.mode === 'NONE') return { type: 'none' };
  if (fc.mode === 'ANY')
    return names.length === 1 ? { type: 'tool', toolName: String(names[0]) } : { type: 'required' };
  if (fc.mode === 'AUTO') return { type: 'auto' };
  return undefined;
}

function finishReasonOf(reason: LanguageModelV3FinishReason): string {
  if (reason.unified === 'length') return 'MAX_TOKENS';
  if (reason.unified === 'content-filter') return 'SAFETY';
  return 'STOP';
}

function usageMetadata(usage: LanguageModelV3Usage): Json {
  const prompt = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  const thoughts = usage.outputTokens.reasoning ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, output - thoughts),
    totalTokenCount: prompt + output,
    ...(usage.inputTokens.cacheRead ? { cachedContentTokenCount: usage.inputTokens.cacheRead } : {}),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
  };
}

/** Usage of a Gemini `usageMetadata` (output adds the thoughts). */
export function readGeminiUsage(raw: Json | undefined): LanguageModelV3Usage {
  const thoughts = Number(raw?.thoughtsTokenCount ?? 0) || 0;
  return usageToV3({
    inputTokens: Number(raw?.promptTokenCount ?? 0) || 0,
    cachedTokens: Number(raw?.cachedContentTokenCount ?? 0) || 0,
    cacheWriteTokens: 0,
    outputTokens: (Number(raw?.candidatesTokenCount ?? 0) || 0) + thoughts,
    reasoningTokens: thoughts,
  });
}

function contentParts(content: readonly LanguageModelV3Content[]): Json[] {
  const parts: Json[] = [];
  for (const part of content) {
    if (part.type === 'text') parts.push({ text: part.text });
    else if (part.type === 'reasoning') parts.push({ text: part.text, thought: true });
    else if (part.type === 'tool-call')
      parts.push({ functionCall: { name: part.toolName, args: inputValue(part.input) } });
  }
  return parts;
}

class GeminiStreamEncoder implements StreamEncoder {
  private readonly responseId = newId('');
  private tools = new Map<string, { name: string; input: string }>();
  private finished: { reason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage } | undefined;

  constructor(private readonly model: string) {}

  private frame(parts: Json[], extra: Json = {}): string {
    return sse({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
      modelVersion: this.model,
      responseId: this.responseId,
    });
  }

  part(part: LanguageModelV3StreamPart): string {
    switch (part.type) {
      case 'text-delta':
        return part.delta === '' ? '' : this.frame([{ text: part.delta }]);
      case 'reasoning-delta':
        return part.delta === '' ? '' : this.frame([{ text: part.delta, thought: true }]);
      case 'tool-input-start':
        this.tools.set(part.id, { name: part.toolName, input: '' });
        return '';
      case 'tool-input-delta': {
        const tool = this.tools.get(part.id);
        if (tool) tool.input += part.delta;
        return '';
      }
      case 'tool-call':
        this.tools.delete(part.toolCallId);
        return this.frame([{ functionCall: { name: part.toolName, args: inputValue(part.input) } }]);
      case 'finish':
        this.finished = { reason: part.finishReason, usage: part.usage };
        return '';
      default:
        return '';
    }
  }

  end(): string {
    // Calls whose input streamed but whose `tool-call` part never came.
    let out = '';
    for (const tool of this.tools.values())
      out += this.frame([{ functionCall: { name: tool.name, args: inputValue(tool.input) } }]);
    const reason = this.finished?.reason ?? finish('stop');
    return (
      out +
      sse({
        candidates: [
          {
            content: { role: 'model', parts: [{ text: '' }] },
            finishReason: finishReasonOf(reason),
            index: 0,
          },
        ],
        ...(this.finished ? { usageMetadata: usageMetadata(this.finished.usage) } : {}),
        modelVersion: this.model,
        responseId: this.responseId,
      })
    );
  }
}

class GeminiAnswerReader implements AnswerReader {
  private text = '';
  private thoughts = '';
  private calls: Array<{ name: string; args: unknown; id?: string }> = [];
  private finishRaw: unknown;
  private usage: Json | undefined;
  private id: string | undefined;

  event(_name: string | undefined, data: string): void {
    const chunk = JSON.parse(data) as Json;
    if (chunk.error) throw new Error(`upstream stream error: ${JSON.stringify(chunk.error).slice(0, 500)}`);
    this.id ??= typeof chunk.responseId === 'string' ? chunk.responseId : undefined;
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata as Json;
    const candidate = ((chunk.candidates as Json[] | undefined) ?? [])[0];
    if (!candidate) return;
    for (const p of ((candidate.content as Json | undefined)?.parts as Json[] | undefined) ?? []) {
      if (p.functionCall) {
        const call = p.functionCall as Json;
        this.calls.push({
          name: String(call.name ?? ''),
          args: call.args ?? {},
          ...(typeof call.id === 'string' ? { id: call.id } : {}),
        });
      } else if (typeof p.text === 'string') {
        if (p.thought === true) this.thoughts += p.text;
        else this.text += p.text;
      }
    }
    if (candidate.finishReason) this.finishRaw = candidate.finishReason;
  }

  answer(): ModelAnswer {
    const content: LanguageModelV3Content[] = [];
    if (this.thoughts) content.push({ type: 'reasoning', text: this.thoughts });
    if (this.text) content.push({ type: 'text', text: this.text });
    this.calls.forEach((call, i) => {
      content.push({
        type: 'tool-call',
        toolCallId: call.id ?? `call_${i}`,
        toolName: call.name,
        input: JSON.stringify(call.args),
      });
    });
    const raw = typeof this.finishRaw === 'string' ? this.finishRaw : undefined;
    const finishReason =
      raw === 'MAX_TOKENS'
        ? finish('length', raw)
        : raw === 'SAFETY' || raw === 'RECITATION' || raw === 'PROHIBITED_CONTENT'
          ? finish('content-filter', raw)
          : this.calls.length > 0
            ? finish('tool-calls', raw)
            : finish('stop', raw);
    return { content, finishReason, usage: readGeminiUsage(this.usage), ...(this.id ? { id: this.id } : {}) };
  }

  providerCost(): undefined {
    return undefined;
  }
}

/** The model and method of a Gemini path (`/v1beta/models/NAME:generateContent`). */
export function geminiPath(pathname: string): { model: string; method: string } | undefined {
  const match = /\/models\/([^/:]+(?:\/[^/:]+)*):([A-Za-z]+)$/.exec(pathname);
  if (!match) return undefined;
  return { model: decodeURIComponent(match[1] as string), method: match[2] as string };
}

export const geminiCodec: ProtocolCodec = {
  protocol: 'gemini',

  parseRequest(body: unknown, url: URL): ParsedRequest {
    const b = object(body, 'body');
    const warnings: string[] = [];
    const path = geminiPath(url.pathname);
    const config = (b.generationConfig ?? {}) as Json;
    const count = optionalNumber(config.candidateCount, 'generationConfig.candidateCount');
    if (count !== undefined && count !== 1)
      throw new GatewayRequestError(400, '`generationConfig.candidateCount` other than 1 is not supported');
    const maxTokens = optionalNumber(config.maxOutputTokens, 'generationConfig.maxOutputTokens');
    const temperature = optionalNumber(config.temperature, 'generationConfig.temperature');
    const topP = optionalNumber(config.topP, 'generationConfig.topP');
    const topK = optionalNumber(config.topK, 'generationConfig.topK');
    const seed = optionalNumber(config.seed, 'generationConfig.seed');
    const tools = b.tools ? geminiTools(array(b.tools, 'tools'), warnings) : [];
    const choice = geminiToolChoice(b.toolConfig);
    const call: LanguageModelV3CallOptions = {
      prompt: geminiMessages(
        b.systemInstruction ?? b.system_instruction,
        array(b.contents ?? [], 'contents'),
      ),
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { topP } : {}),
      ...(topK !== undefined ? { topK } : {}),
      ...(seed !== undefined ? { seed } : {}),
      ...(Array.isArray(config.stopSequences) ? { stopSequences: config.stopSequences.map(String) } : {}),
      ...(tools.length > 0 ? { tools } : {}),
      ...(choice ? { toolChoice: choice } : {}),
      ...(config.responseMimeType === 'application/json'
        ? {
            responseFormat: {
              type: 'json' as const,
              ...(config.responseJsonSchema || config.responseSchema
                ? {
                    schema: (config.responseJsonSchema ??
                      geminiSchemaToJson(config.responseSchema)) as JSONSchema7,
                  }
                : {}),
            },
          }
        : {}),
    };
    return {
      call,
      stream: path?.method === 'streamGenerateContent',
      requestedModel: path?.model ?? '',
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  },

  renderAnswer(answer: ModelAnswer, model: string): unknown {
    return {
      candidates: [
        {
          content: { role: 'model', parts: contentParts(answer.content) },
          finishReason: finishReasonOf(answer.finishReason),
          index: 0,
        },
      ],
      usageMetadata: usageMetadata(answer.usage),
      modelVersion: model,
      responseId: answer.id ?? newId(''),
    };
  },

  streamEncoder(model: string): StreamEncoder {
    return new GeminiStreamEncoder(model);
  },

  readAnswer(body: unknown) {
    const reader = new GeminiAnswerReader();
    reader.event(undefined, JSON.stringify(object(body, 'response')));
    return { answer: reader.answer() };
  },

  answerReader(): AnswerReader {
    return new GeminiAnswerReader();
  },

  errorBody(status: number, message: string): unknown {
    const statusName =
      status === 400
        ? 'INVALID_ARGUMENT'
        : status === 401
          ? 'UNAUTHENTICATED'
          : status === 403
            ? 'PERMISSION_DENIED'
            : status === 404
              ? 'NOT_FOUND'
              : status === 429
                ? 'RESOURCE_EXHAUSTED'
                : status === 503
                  ? 'UNAVAILABLE'
                  : status === 504
                    ? 'DEADLINE_EXCEEDED'
                    : 'INTERNAL';
    return { error: { code: status, message, status: statusName } };
  },
};
