import { describe, expect, it } from 'vitest';
import { passthroughBody } from './upstream.ts';

describe('passthroughBody', () => {
  const target = { provider: 'openai', name: 'gpt-4o' } as Parameters<typeof passthroughBody>[0];

  it('asks for usage in every streamed OpenAI chat or text completion (breaker11 F2)', () => {
    for (const protocol of ['openai-chat', 'openai-completions'] as const) {
      const out = passthroughBody(
        target,
        protocol,
        { model: 'x', stream: true, stream_options: { a: 1 } },
        true,
      ) as {
        model: string;
        stream_options: Record<string, unknown>;
      };
      expect(out.model).toBe('gpt-4o');
      expect(out.stream_options).toEqual({ a: 1, include_usage: true });
    }
  });

  it('leaves a call that is not streamed, and other protocols, without stream options', () => {
    expect(passthroughBody(target, 'openai-completions', { model: 'x' }, false)).toEqual({ model: 'gpt-4o' });
    expect(passthroughBody(target, 'openai-responses', { model: 'x', stream: true }, true)).toEqual({
      model: 'gpt-4o',
      stream: true,
    });
  });

  it("writes the gateway's output cap in each protocol's own field", () => {
    const cap = (
      protocol: Parameters<typeof passthroughBody>[1],
      body: Record<string, unknown>,
      t = target,
    ) => passthroughBody(t, protocol, body, false, 700) as Record<string, unknown>;
    expect(cap('openai-chat', {})).toMatchObject({ max_completion_tokens: 700 });
    expect(cap('openai-chat', {})).not.toHaveProperty('max_tokens');
    expect(cap('openai-chat', { max_tokens: 9000 })).toMatchObject({ max_tokens: 700 });
    expect(cap('openai-chat', {}, { ...target, provider: 'hosted_vllm' })).toMatchObject({ max_tokens: 700 });
    expect(cap('openai-responses', {})).toMatchObject({ max_output_tokens: 700 });
    expect(cap('openai-completions', {})).toMatchObject({ max_tokens: 700 });
    expect(cap('gemini', { generationConfig: { temperature: 0 } })).toMatchObject({
      generationConfig: { temperature: 0, maxOutputTokens: 700 },
    });
    expect(
      cap('anthropic-messages', { max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 31999 } }),
    ).toMatchObject({ max_tokens: 700, thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(passthroughBody(target, 'openai-chat', { max_tokens: 5 }, false)).toEqual({
      model: 'gpt-4o',
      max_tokens: 5,
    });
  });
});
