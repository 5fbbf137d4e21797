/** The wire protocols' codecs, by protocol. */
import type { ProtocolCodec, WireProtocol } from '../types.ts';
import { anthropicCodec } from './anthropic.ts';
import { geminiCodec } from './gemini.ts';
import { openaiChatCodec } from './openai-chat.ts';
import { openaiCompletionsCodec } from './openai-completions.ts';
import { openaiResponsesCodec } from './openai-responses.ts';

export const CODECS: Readonly<Record<WireProtocol, ProtocolCodec>> = {
  'openai-chat': openaiChatCodec,
  'openai-responses': openaiResponsesCodec,
  'anthropic-messages': anthropicCodec,
  gemini: geminiCodec,
  'openai-completions': openaiCompletionsCodec,
};
