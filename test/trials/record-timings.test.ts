/**
 * A phase that never started or never ended is written as Harbor's models read it (TimingInfo:
 * date-times or null), never as berth's empty placeholder strings: seen in CI when Ctrl-C hit a
 * Docker trial before its agent phase began (test/docker/run-cli.test.ts, Harbor schema check).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTrialResult } from '../../src/trials/record.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(() => temp.cleanup());

describe('writeTrialResult', () => {
  it('writes a phase that never started as null and one that never ended with finished_at null', async () => {
    const dir = await temp.make('berth-record-timings-');
    const at = '2026-12-01T21:00:00.000Z';
    const result = {
      environment_setup: { started_at: at, finished_at: at },
      agent_setup: { started_at: at, finished_at: '' },
      agent_execution: { started_at: '', finished_at: '' },
      verifier: null,
      berth: {},
    } as unknown as TrialResult;
    await writeTrialResult(dir, result);
    const written = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8'));
    expect(written.environment_setup).toEqual({ started_at: at, finished_at: at });
    expect(written.agent_setup).toEqual({ started_at: at, finished_at: null });
    expect(written.agent_execution).toBeNull();
    expect(written.verifier).toBeNull();
    // The live record the engine keeps is not changed.
    expect(result.agent_execution).toEqual({ started_at: '', finished_at: '' });
  });
});
