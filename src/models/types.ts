/**
 * The shapes every part of the model layer shares: the wire protocols the
 * gateway speaks, token usage, and one model call as berth records it.
 *
 * A call is carried between protocols in the Vercel AI SDK's provider
 * specification (`LanguageModelV3CallOptions` in, `LanguageModelV3Content` /
 * `LanguageModelV3StreamPart` out, from `@ai-sdk/provider`): every codec
 * under protocols/ reads its vendor's request into it and writes its vendor's
 * response (JSON or server-sent events) out of it.
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';

/**
 * A vendor HTTP protocol:
 * - `openai-chat`: OpenAI Chat Completions, `POST /v1/chat/completions`;
 * - `openai-responses`: OpenAI Responses, `POST /v1/responses`;
 * - `anthropic-messages`: Anthropic Messages, `POST /v1/messages`;
 * - `gemini`: Google's Gemini API, `POST /v1beta/models/{model}:generateContent` and
 *   `:streamGenerateContent` (`?alt=sse` for server-sent events);
 * - `openai-completions`: OpenAI's legacy Completions, `POST /v1/completions` (passed through only).
 */
export type WireProtocol =
  | 'openai-chat'
  | 'openai-responses'
  | 'anthropic-messages'
  | 'gemini'
  | 'openai-completions';

export const WIRE_PROTOCOLS: readonly WireProtocol[] = [
  'openai-chat',
  'openai-responses',
  'anthropic-messages',
  'gemini',
  'openai-completions',
];

/**
 * Tokens of one call or a sum of calls, as Harbor counts them (`AgentContext`):
 * `inputTokens` includes the cached ones (Anthropic reports them apart; berth adds them).
 */
export interface TokenUsage {
  /** Prompt tokens, cached and cache-written included. */
  inputTokens: number;
  /** Prompt tokens read from the provider's prompt cache (a subset of `inputTokens`). */
  cachedTokens: number;
  /** Prompt tokens written to the provider's prompt cache (a subset of `inputTokens`; Anthropic). */
  cacheWriteTokens: number;
  /** Generated tokens, reasoning included. */
  outputTokens: number;
  /** Reasoning tokens (a subset of `outputTokens`), where the provider reports them. */
  reasoningTokens: number;
}

export const ZERO_USAGE: TokenUsage = Object.freeze({
  inputTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
});

/** `a + b`, field by field. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

/** berth's usage from the AI SDK's (missing counts are 0). */
export function usageFromV3(usage: LanguageModelV3Usage | undefined): TokenUsage {
  if (!usage) return { ...ZERO_USAGE };
  const cached = usage.inputTokens.cacheRead ?? 0;
  const written = usage.inputTokens.cacheWrite ?? 0;
  const total = usage.inputTokens.total ?? (usage.inputTokens.noCache ?? 0) + cached + written;
  return {
    inputTokens: total,
    cachedTokens: cached,
    cacheWriteTokens: written,
    outputTokens: usage.outputTokens.total ?? 0,
    reasoningTokens: usage.outputTokens.reasoning ?? 0,
  };
}

/** The AI SDK's usage from berth's. */
export function usageToV3(usage: TokenUsage): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: usage.inputTokens,
      noCache: usage.inputTokens - usage.cachedTokens - usage.cacheWriteTokens,
      cacheRead: usage.cachedTokens,
      cacheWrite: usage.cacheWriteTokens,
    },
    outputTokens: {
      total: usage.outputTokens,
      text: usage.outputTokens - usage.reasoningTokens,
      reasoning: usage.reasoningTokens,
    },
  };
}

/** A request read off the wire: the call in the AI SDK's terms, and what the agent asked for. */
export interface ParsedRequest {
  call: LanguageModelV3CallOptions;
  /** Whether the agent asked for server-sent events. */
  stream: boolean;
  /** The model name the agent sent (the gateway answers with the trial's model whatever it is). */
  requestedModel: string;
  /** What the codec needs again to write the answer (e.g. which tools were custom ones). */
  hints?: Record<string, unknown>;
  /** What could not be carried over and was left out (recorded with the call). */
  warnings?: string[];
}

/** One finished answer in the AI SDK's terms (what a codec writes, whatever produced it). */
export interface ModelAnswer {
  content: LanguageModelV3Content[];
  finishReason: LanguageModelV3FinishReason;
  usage: LanguageModelV3Usage;
  /** Response id from the upstream, when it gave one. */
  id?: string;
}

/** Writes one protocol's streamed answer: each AI SDK stream part becomes zero or more SSE frames. */
export interface StreamEncoder {
  /** Frames for one stream part (may be ''). */
  part(part: LanguageModelV3StreamPart): string;
  /** Frames that close the stream (after the `finish` part, or after an error). */
  end(): string;
}

/** Reads one protocol's answer (JSON, or SSE frames one by one) back into the AI SDK's terms. */
export interface AnswerReader {
  /** Feeds one server-sent event (its `event:` name, if any, and its `data:`). */
  event(name: string | undefined, data: string): void;
  /** The answer so far (complete once the stream ended). */
  answer(): ModelAnswer;
  /** The provider's own cost of the call in USD, when it reported one (OpenRouter's `usage.cost`). */
  providerCost(): number | undefined;
}

/** What the gateway needs of one wire protocol. */
export interface ProtocolCodec {
  readonly protocol: WireProtocol;
  /**
   * Reads a request body into the AI SDK's call options.
   * @throws GatewayRequestError for a body the protocol does not accept.
   */
  parseRequest(body: unknown, url: URL): ParsedRequest;
  /** The JSON body of a non-streamed answer to `request`. */
  renderAnswer(answer: ModelAnswer, model: string, request?: ParsedRequest): unknown;
  /** A writer of the streamed answer to `request`. */
  streamEncoder(model: string, request?: ParsedRequest): StreamEncoder;
  /** Reads a JSON (non-streamed) answer. */
  readAnswer(body: unknown): { answer: ModelAnswer; providerCost?: number };
  /** A reader of a streamed answer. */
  answerReader(): AnswerReader;
  /** The vendor's error body for a status and message. */
  errorBody(status: number, message: string, type?: string): unknown;
}

/** A request the gateway refuses (bad body, unsupported feature): status and message for the agent. */
export class GatewayRequestError extends Error {
  override name = 'GatewayRequestError';
  constructor(
    readonly status: number,
    message: string,
    /** The vendor-style error type (`invalid_request_error`, ...). */
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}
