/**
 * A finished answer and the stream of AI SDK parts that carries it, both ways:
 * `answerToParts` streams a stored answer (the response cache, the scripted model
 * server under test/) and `AnswerAccumulator` rebuilds an answer from a stream
 * (what the gateway records of a translated streamed call).
 */
import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { inputText } from './protocols/common.ts';
import { type ModelAnswer, usageToV3, ZERO_USAGE } from './types.ts';

/** Splits text into pieces of at most `size` characters (at least one piece). */
function pieces(text: string, size: number): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * The stream parts of an answer: `stream-start`, `response-metadata`, each text and
 * reasoning part as start / deltas of `chunk` characters / end, each tool call as
 * `tool-input-start`, deltas, `tool-input-end` and `tool-call`, then `finish`.
 */
export function answerToParts(answer: ModelAnswer, chunk = 40): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (answer.id) parts.push({ type: 'response-metadata', id: answer.id });
  answer.content.forEach((part, i) => {
    if (part.type === 'text' || part.type === 'reasoning') {
      const id = `${part.type}-${i}`;
      const kind = part.type;
      parts.push({ type: `${kind}-start`, id });
      for (const delta of pieces(part.text, chunk)) parts.push({ type: `${kind}-delta`, id, delta });
      parts.push({
        type: `${kind}-end`,
        id,
        ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
      });
    } else if (part.type === 'tool-call') {
      const input = inputText(part.input);
      parts.push({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName });
      for (const delta of pieces(input, chunk))
        parts.push({ type: 'tool-input-delta', id: part.toolCallId, delta });
      parts.push({ type: 'tool-input-end', id: part.toolCallId });
      parts.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input });
    }
  });
  parts.push({ type: 'finish', finishReason: answer.finishReason, usage: answer.usage });
  return parts;
}

/** Rebuilds the answer a stream of parts carried. */
export class AnswerAccumulator {
  private content: LanguageModelV3Content[] = [];
  private open = new Map<string, { type: 'text' | 'reasoning'; text: string; index: number }>();
  private finishReason: LanguageModelV3FinishReason = { unified: 'other', raw: undefined };
  private usage: LanguageModelV3Usage = usageToV3(ZERO_USAGE);
  private id: string | undefined;
  /** True once a `finish` part arrived. */
  finished = false;

  add(part: LanguageModelV3StreamPart): void {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const type = part.type === 'text-start' ? 'text' : 'reasoning';
        this.content.push({ type, text: '' });
        this.open.set(`${type}:${part.id}`, { type, text: '', index: this.content.length - 1 });
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const type = part.type === 'text-delta' ? 'text' : 'reasoning';
        let open = this.open.get(`${type}:${part.id}`);
        if (!open) {
          this.content.push({ type, text: '' });
          open = { type, text: '', index: this.content.length - 1 };
          this.open.set(`${type}:${part.id}`, open);
        }
        open.text += part.delta;
        (this.content[open.index] as { text: string }).text = open.text;
        break;
      }
      case 'reasoning-end': {
        const open = this.open.get(`reasoning:${part.id}`);
        if (open && part.providerMetadata)
          (this.content[open.index] as { providerMetadata?: unknown }).providerMetadata =
            part.providerMetadata;
        break;
      }
      case 'tool-call':
        this.content.push(part);
        break;
      case 'response-metadata':
        if (part.id) this.id = part.id;
        break;
      case 'finish':
        this.finishReason = part.finishReason;
        this.usage = part.usage;
        this.finished = true;
        break;
      default:
        break;
    }
  }

  answer(): ModelAnswer {
    return {
      content: this.content.filter((c) => !((c.type === 'text' || c.type === 'reasoning') && c.text === '')),
      finishReason: this.finishReason,
      usage: this.usage,
      ...(this.id ? { id: this.id } : {}),
    };
  }
}
