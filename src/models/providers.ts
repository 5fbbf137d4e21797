/**
 * Model names as Harbor and LiteLLM spell them (`PROVIDER/NAME`:
 * `openrouter/anthropic/claude-opus-4.6`, `anthropic/claude-sonnet-4-5`,
 * `openai/gpt-5`, `gemini/gemini-2.5-pro`), the providers berth knows, where
 * each one's key and base URL come from, and which wire protocols its API
 * speaks. Any other provider name works with `--model-base-url` as an
 * OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama, ...).
 */
import { UsageError } from '../errors.ts';
import type { WireProtocol } from './types.ts';

/** What berth knows of one provider. */
export interface ProviderInfo {
  /** berth's name (`-m NAME/...`). */
  name: string;
  /** Other names users type for it (LiteLLM's). */
  aliases?: string[];
  /** How berth calls it: an AI SDK provider package. */
  sdk: 'openai' | 'openai-compatible' | 'anthropic' | 'google';
  /** The protocols its API speaks, preferred first (a same-protocol request is passed through). */
  protocols: WireProtocol[];
  /** Variables holding its key, first set wins. */
  keyVars: string[];
  /** Variables holding its base URL, first set wins. */
  baseUrlVars: string[];
  /** Its public API's base URL (undefined: `--model-base-url` is required). */
  defaultBaseUrl?: string;
  /** Whether a request without a key is refused before it is sent (local servers need none). */
  needsKey: boolean;
}

export const PROVIDERS: readonly ProviderInfo[] = [
  {
    name: 'openai',
    sdk: 'openai',
    protocols: ['openai-chat', 'openai-responses', 'openai-completions'],
    keyVars: ['OPENAI_API_KEY'],
    baseUrlVars: ['OPENAI_BASE_URL', 'OPENAI_API_BASE'],
    defaultBaseUrl: 'https://api.openai.com/v1',
    needsKey: true,
  },
  {
    name: 'anthropic',
    sdk: 'anthropic',
    protocols: ['anthropic-messages'],
    keyVars: ['ANTHROPIC_API_KEY'],
    baseUrlVars: ['ANTHROPIC_BASE_URL'],
    defaultBaseUrl: 'https://api.anthropic.com/v1',
    needsKey: true,
  },
  {
    name: 'gemini',
    aliases: ['google', 'google-genai'],
    sdk: 'google',
    protocols: ['gemini'],
    keyVars: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'],
    baseUrlVars: ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_BASE_URL'],
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    needsKey: true,
  },
  {
    name: 'openrouter',
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['OPENROUTER_API_KEY'],
    baseUrlVars: ['OPENROUTER_API_BASE', 'OPENROUTER_BASE_URL'],
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
    needsKey: true,
  },
  {
    name: 'deepseek',
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['DEEPSEEK_API_KEY'],
    baseUrlVars: ['DEEPSEEK_API_BASE', 'DEEPSEEK_BASE_URL'],
    defaultBaseUrl: 'https://api.deepseek.com/v1',
    needsKey: true,
  },
  {
    name: 'groq',
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['GROQ_API_KEY'],
    baseUrlVars: ['GROQ_API_BASE'],
    defaultBaseUrl: 'https://api.groq.com/openai/v1',
    needsKey: true,
  },
  {
    name: 'together_ai',
    aliases: ['together'],
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['TOGETHER_API_KEY', 'TOGETHERAI_API_KEY'],
    baseUrlVars: ['TOGETHER_API_BASE'],
    defaultBaseUrl: 'https://api.together.xyz/v1',
    needsKey: true,
  },
  {
    name: 'mistral',
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['MISTRAL_API_KEY'],
    baseUrlVars: ['MISTRAL_API_BASE'],
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    needsKey: true,
  },
  {
    name: 'xai',
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['XAI_API_KEY'],
    baseUrlVars: ['XAI_API_BASE'],
    defaultBaseUrl: 'https://api.x.ai/v1',
    needsKey: true,
  },
  {
    name: 'ollama',
    aliases: ['ollama_chat'],
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['OLLAMA_API_KEY'],
    baseUrlVars: ['OLLAMA_API_BASE', 'OLLAMA_BASE_URL'],
    defaultBaseUrl: 'http://127.0.0.1:11434/v1',
    needsKey: false,
  },
  {
    name: 'hosted_vllm',
    aliases: ['vllm', 'lm_studio', 'llamacpp', 'openai-compatible', 'openai_compatible', 'custom'],
    sdk: 'openai-compatible',
    protocols: ['openai-chat', 'openai-completions'],
    keyVars: ['HOSTED_VLLM_API_KEY', 'OPENAI_COMPATIBLE_API_KEY'],
    baseUrlVars: ['HOSTED_VLLM_API_BASE', 'OPENAI_COMPATIBLE_BASE_URL'],
    needsKey: false,
  },
];

/** The provider of a name or alias, case-insensitively. */
export function findProvider(name: string): ProviderInfo | undefined {
  const wanted = name.toLowerCase();
  return PROVIDERS.find((p) => p.name === wanted || p.aliases?.includes(wanted));
}

/**
 * One model a job uses, as plain data (it goes into trial specs and config files; the key
 * never does: the gateway looks it up by `keyVar` on the host).
 */
export interface ModelTarget {
  /** What the user typed, e.g. `openrouter/anthropic/claude-opus-4.6`. */
  id: string;
  /** berth's provider name (`openrouter`), or the user's for an OpenAI-compatible server. */
  provider: string;
  /** The name the provider knows (`anthropic/claude-opus-4.6`). */
  name: string;
  sdk: ProviderInfo['sdk'];
  /** Base URL of the upstream API, ending in its version folder (`.../v1`, `.../v1beta`). */
  baseUrl: string;
  /** Protocols the upstream speaks, preferred first. */
  protocols: WireProtocol[];
  /** The variable the key is read from (its name only), or undefined for a keyless server. */
  keyVar?: string;
  needsKey: boolean;
}

/** Splits `PROVIDER/NAME` on the first `/` (Harbor's `BaseAgent`). */
export function splitModelName(id: string): { provider: string; name: string } {
  const slash = id.indexOf('/');
  if (slash <= 0 || slash === id.length - 1)
    throw new UsageError(
      `-m/--model ${JSON.stringify(id)}: write PROVIDER/NAME, e.g. openai/gpt-5, anthropic/claude-sonnet-4-5, openrouter/anthropic/claude-opus-4.6`,
    );
  return { provider: id.slice(0, slash), name: id.slice(slash + 1) };
}

function normaliseBaseUrl(url: string, info: ProviderInfo | undefined, flag: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${flag}: ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`${flag}: ${JSON.stringify(url)} is not an http(s) URL`);
  let text = url.replace(/\/+$/, '');
  // Anthropic's SDK convention is a base without /v1 (ANTHROPIC_BASE_URL=https://api.anthropic.com).
  if (info?.sdk === 'anthropic' && !/\/v1$/.test(text)) text = `${text}/v1`;
  if (info?.sdk === 'google' && !/\/v1(beta|alpha)?\d*$/.test(text)) text = `${text}/v1beta`;
  return text;
}

/**
 * Resolves a `-m` name to a target.
 * @param env where base-URL and key variables are read (the process's, merged with `--env-file`)
 * @param baseUrl `--model-base-url`, which wins over the provider's variables
 * @throws UsageError for a malformed name, or an unknown provider without a base URL
 */
export function resolveModel(
  id: string,
  env: Record<string, string | undefined>,
  baseUrl?: string,
): ModelTarget {
  const { provider, name } = splitModelName(id);
  const info = findProvider(provider);
  const fromEnv = info?.baseUrlVars.map((v) => env[v]).find((v) => v !== undefined && v !== '');
  const url = baseUrl ?? fromEnv ?? info?.defaultBaseUrl;
  if (!url)
    throw new UsageError(
      `-m ${id}: berth does not know the provider ${JSON.stringify(provider)}; give its OpenAI-compatible server with --model-base-url URL`,
    );
  const flag = baseUrl !== undefined ? '--model-base-url' : 'the base URL variable';
  const keyVar = info?.keyVars.find((v) => env[v] !== undefined && env[v] !== '') ?? info?.keyVars[0];
  // A custom base URL for OpenAI means an OpenAI-compatible server: chat completions only.
  const custom = baseUrl !== undefined || fromEnv !== undefined;
  const protocols: WireProtocol[] =
    info?.name === 'openai' && custom
      ? ['openai-chat', 'openai-completions']
      : [...(info?.protocols ?? ['openai-chat', 'openai-completions'])];
  return {
    id,
    provider: info?.name ?? provider,
    // An unknown prefix is part of the server's model name (vLLM serves `Qwen/Qwen3-Coder-30B`).
    name: info ? name : id,
    sdk: info?.sdk ?? 'openai-compatible',
    baseUrl: normaliseBaseUrl(url, info, flag),
    protocols,
    ...(keyVar ? { keyVar } : {}),
    // A provider's public API needs a key; a server given by URL may not.
    needsKey: (info?.needsKey ?? false) && !custom,
  };
}
