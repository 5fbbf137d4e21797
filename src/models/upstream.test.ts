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
});
