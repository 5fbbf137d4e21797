import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { readSamples } from '../../src/functional/formats.ts';
import { readRowFile } from '../../src/tasks/swebench/read-rows.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
afterEach(() => vi.restoreAllMocks());

/** Lines joined by \n, each a JSON text with `BAD` replaced by the invalid UTF-8 byte 0xFF. */
function bytesOf(lines: string[]): Buffer {
  return Buffer.concat(
    lines.flatMap((line, i) => {
      const parts = line
        .split('BAD')
        .flatMap((part, j) => (j === 0 ? [Buffer.from(part)] : [Buffer.from([0xff]), Buffer.from(part)]));
      return i < lines.length - 1 ? [...parts, Buffer.from('\n')] : parts;
    }),
  );
}

function captureStderr(): string[] {
  const written: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return written;
}

describe('invalid UTF-8: warned about in text fields (file and line), refused in ids', () => {
  it('SWE-bench rows: a bad byte in problem_statement is read with a warning naming line 2', async () => {
    const file = join(await temp.make('berth-utf8-'), 'rows.jsonl');
    await writeFile(
      file,
      bytesOf([
        '{"instance_id":"a-1","problem_statement":"ok"}',
        '{"instance_id":"a-2","problem_statement":"caf BAD"}',
      ]),
    );
    const stderr = captureStderr();
    const rows = await readRowFile(file);
    expect(rows).toHaveLength(2);
    expect((rows[1] as { value: { problem_statement: string } }).value.problem_statement).toBe('caf \uFFFD');
    expect(stderr.join('')).toContain(`berth: warning: ${file}: invalid UTF-8 on line(s) 2;`);
  });

  it('SWE-bench rows: a bad byte in instance_id is refused naming the line and field', async () => {
    const file = join(await temp.make('berth-utf8-'), 'rows.jsonl');
    await writeFile(file, bytesOf(['{"instance_id":"a-1"}', '{"instance_id":"a-BAD"}']));
    captureStderr();
    const error = await readRowFile(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).location).toMatchObject({ file, line: 2, field: 'instance_id' });
  });

  it('function-level samples: a bad byte in a completion is read with a warning naming its line', async () => {
    const file = join(await temp.make('berth-utf8-'), 'samples.jsonl');
    await writeFile(
      file,
      bytesOf([
        '{"task_id":"HumanEval/0","completion":"  return 1\\n"}',
        '{"task_id":"HumanEval/0","completion":"  return 2 # BAD\\n"}',
      ]),
    );
    const stderr = captureStderr();
    expect(await readSamples(file)).toHaveLength(2);
    expect(stderr.join('')).toContain(`${file}: invalid UTF-8 on line(s) 2;`);
  });
});
