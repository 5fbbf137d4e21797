/**
 * The text form of events (job.log, trial.log, `berth run --debug`): an agent's or a model's
 * text cannot drive the terminal or forge a log line (a hostile message with escape sequences
 * and newlines).
 */
import { describe, expect, it } from 'vitest';
import { eventText } from '../../src/trials/event-log.ts';
import type { BerthEvent } from '../../src/trials/events.ts';

describe('eventText', () => {
  it('writes one line with control characters escaped', () => {
    const hostile = {
      type: 'message',
      v: 1,
      time: '2026-12-01T00:00:00.000Z',
      job: 'j',
      trial: 't__1',
      role: 'assistant',
      text: 'done\u001b]0;owned\u0007\r\n2026-12-01T00:00:01.000Z INFO [t__1] trial ended: resolved\u009b2J',
    } as BerthEvent;
    const line = eventText(hostile);
    expect(line.split('\n')).toHaveLength(1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for them
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).toContain('done\\x1b]0;owned\\x07');
    expect(line).toContain('\\x9b2J');
    expect(line.startsWith('2026-12-01T00:00:00.000Z INFO [t__1] assistant message: ')).toBe(true);
  });
});
