import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type BerthEvent,
  berthEventSchema,
  EVENTS_SCHEMA_VERSION,
  eventsJsonSchema,
  parseEventLine,
  trialEmitter,
} from '../../src/trials/events.ts';

const schemaFile = fileURLToPath(new URL('../../docs/events.schema.json', import.meta.url));

describe('events', () => {
  it('stamps version, time, job and trial on what a trial emits, and every event reads back from its line', () => {
    const seen: BerthEvent[] = [];
    const emit = trialEmitter((e) => seen.push(e), 'job-1', 'task__1');
    emit({ type: 'phase-start', phase: 'agent' });
    emit({
      type: 'phase-end',
      phase: 'agent',
      duration_sec: 1.5,
      exception: { type: 'AgentTimeoutError', message: 'x' },
    });
    emit({
      type: 'model-call',
      provider: 'openai',
      model: 'gpt-5',
      protocol: 'openai-chat',
      input_tokens: 10,
      cached_tokens: 2,
      output_tokens: 3,
      cost_usd: null,
      duration_sec: 0.2,
    });
    emit({
      type: 'tool-call',
      name: 'bash',
      arguments: { cmd: 'ls' },
      output: 'a\nb',
      output_truncated: false,
    });
    emit({ type: 'command', command: 'pytest', exit_code: 1, timed_out: false, duration_sec: 3 });
    emit({ type: 'message', role: 'assistant', text: 'done' });
    emit({
      type: 'verdict',
      status: 'unresolved',
      rewards: { reward: 0 },
      FAIL_TO_PASS: { passed: 0, total: 1 },
      PASS_TO_PASS: null,
      reason: 'FAIL_TO_PASS not passed: 1 failed',
    });
    emit({ type: 'notice', level: 'warning', message: 'm' });
    expect(seen).toHaveLength(8);
    for (const event of seen) {
      expect(event).toMatchObject({ v: EVENTS_SCHEMA_VERSION, job: 'job-1', trial: 'task__1' });
      expect(Number.isNaN(Date.parse(event.time))).toBe(false);
      expect(parseEventLine(JSON.stringify(event))).toEqual(event);
    }
  });

  it('skips blank, cut, unknown and future lines instead of failing (a killed run leaves a half line)', () => {
    const good = JSON.stringify({
      v: 1,
      type: 'job-start',
      time: new Date().toISOString(),
      job: 'j',
      job_id: 'id',
      n_trials: 2,
      berth_version: '0.1.0',
    });
    expect(parseEventLine(good)?.type).toBe('job-start');
    expect(parseEventLine('')).toBeUndefined();
    expect(parseEventLine(good.slice(0, 20))).toBeUndefined();
    expect(parseEventLine(JSON.stringify({ ...JSON.parse(good), type: 'no-such-event' }))).toBeUndefined();
    expect(parseEventLine(JSON.stringify({ ...JSON.parse(good), v: 99 }))).toBeUndefined();
    // A trial event without its trial is not an event.
    expect(
      berthEventSchema.safeParse({ v: 1, type: 'phase-start', time: 't', job: 'j', phase: 'agent' }).success,
    ).toBe(false);
  });

  it('has its JSON Schema in docs/events.schema.json (regenerate with BERTH_UPDATE_SCHEMA=1)', () => {
    const generated = `${JSON.stringify(eventsJsonSchema(), null, 2)}\n`;
    if (process.env.BERTH_UPDATE_SCHEMA === '1') writeFileSync(schemaFile, generated);
    expect(readFileSync(schemaFile, 'utf8')).toBe(generated);
  });
});
