import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { gradeFiles } from '../../src/cli/grade-files.ts';
import { InputError } from '../../src/errors.ts';
import { readSamples } from '../../src/functional/formats.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const example = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));

async function rejection(promise: Promise<unknown>): Promise<InputError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

describe('messages name the wrong thing', () => {
  it('a one-line sample file whose task_id is a number names task_id and its type', async () => {
    const file = join(await temp.make('berth-msg-'), 'samples.jsonl');
    await writeFile(file, '{"task_id":0,"completion":"  return 1\\n"}\n');
    const error = await rejection(readSamples(file));
    expect(error.location).toMatchObject({ file, line: 1, field: 'task_id' });
    expect(error.message).toContain('must be a string, got 0');
  });

  it('berth grade: a missing report file is bad input for every rule set', async () => {
    const dir = await temp.make('berth-msg-');
    const kotlin = join(dir, 'expected_tests.json');
    await writeFile(kotlin, JSON.stringify({ f2p_tests: ['a.B.c()'], p2p_tests: [] }));
    const msb = join(dir, 'msb.json');
    await writeFile(
      msb,
      JSON.stringify({
        instance_id: 'x',
        fixed_tests: {},
        p2p_tests: {},
        f2p_tests: {},
        s2p_tests: {},
        n2p_tests: {},
      }),
    );
    const missing = join(dir, 'none.xml');
    for (const options of [
      { expected: kotlin },
      { expected: kotlin, rules: 'kotlin' },
      { expected: msb, rules: 'multi-swe-bench' },
      { expected: example, instanceId: 'berth__csvline-1' },
    ]) {
      const error = await rejection(gradeFiles({ ...options, reports: [missing] }));
      expect(error.location.file).toBe(missing);
      expect(error.message).toContain('no such file or folder');
    }
  });
});
