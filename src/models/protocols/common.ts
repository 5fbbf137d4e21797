/**
 * Helpers the protocol codecs share: reading loosely typed request bodies,
 * ids, finish reasons, tool inputs and SSE framing.
 */
import { randomBytes } from 'node:crypto';
import type {
  LanguageModelV3Content,
  LanguageModelV3FilePart,
  LanguageModelV3FinishReason,
  LanguageModelV3ToolCall,
} from '@ai-sdk/provider';
import { GatewayRequestError } from '../types.ts';

export type Json = Record<string, unknown>;

/** `value` as an object, or a 400 naming `field`. */
export function object(value: unknown, field: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new GatewayRequestError(400, `\`${field}\` must be an object`);
  return value as Json;
}

/** `value` as an array, or a 400 naming `field`. */
export function array(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new GatewayRequestError(400, `\`${field}\` must be an array`);
  return value;
}

/** `value` as a string (undefined when absent), or a 400 naming `field`. */
export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new GatewayRequestError(400, `\`${field}\` must be a string`);
  return value;
}

/** `value` as a finite number (undefined when absent), or a 400 naming `field`. */
export function optionalNumber(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new GatewayRequestError(400, `\`${field}\` must be a number`);
  return value;
}

/** A random id with a vendor-like prefix (`chatcmpl-`, `msg_`, `call_`, ...). */
export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

/** The tool call's input as a JSON text (the AI SDK carries it as a string). */
export function inputText(input: unknown): string {
  if (typeof input === 'string') return input === '' ? '{}' : input;
  return JSON.stringify(input ?? {});
}

/** The tool call's input as a value (what the vendors that send objects want). */
export function inputValue(input: unknown): unknown {
  if (typeof input !== 'string') return input ?? {};
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input);
  } catch {
    return { input };
  }
}

/** The unified finish reason for a raw one. */
export function finish(
  unified: LanguageModelV3FinishReason['unified'],
  raw?: string | null,
): LanguageModelV3FinishReason {
  return { unified, raw: raw ?? undefined };
}

/** Whether the answer's content asks for tools. */
export function hasToolCalls(content: readonly LanguageModelV3Content[]): boolean {
  return content.some((part) => part.type === 'tool-call');
}

/** The tool calls of an answer. */
export function toolCalls(content: readonly LanguageModelV3Content[]): LanguageModelV3ToolCall[] {
  return content.filter((part): part is LanguageModelV3ToolCall => part.type === 'tool-call');
}

/** The concatenated text parts of an answer. */
export function textOf(content: readonly LanguageModelV3Content[]): string {
  return content
    .filter((part) => part.type === 'text')
    .map((part) => (part as { text: string }).text)
    .join('');
}

/** The concatenated reasoning parts of an answer. */
export function reasoningOf(content: readonly LanguageModelV3Content[]): string {
  return content
    .filter((part) => part.type === 'reasoning')
    .map((part) => (part as { text: string }).text)
    .join('');
}

/** A file part from a `data:` URL or an http(s) URL (images in user messages). */
export function filePartFromUrl(url: string, field: string, mediaType?: string): LanguageModelV3FilePart {
  const data = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(url);
  if (data) {
    const type = data[1] ?? mediaType ?? 'application/octet-stream';
    const body = data[2]
      ? (data[3] ?? '')
      : Buffer.from(decodeURIComponent(data[3] ?? '')).toString('base64');
    return { type: 'file', mediaType: type, data: body };
  }
  try {
    return { type: 'file', mediaType: mediaType ?? 'image/*', data: new URL(url) };
  } catch {
    throw new GatewayRequestError(400, `\`${field}\` is neither a data: URL nor a URL`);
  }
}

/** One server-sent event frame (`event:` line only when named). */
export function sse(data: unknown, event?: string): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${text}\n\n`;
}

/** Seconds since the epoch, as OpenAI's `created` fields. */
export function epochSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
