import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { readRows, readTestList } from './rows.ts';

const scratch = await mkdtemp(join(tmpdir(), 'berth-rows-test-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('readRows', () => {
  it('reads JSONL, a JSON list and a JSON object keyed by id alike', async () => {
    const a = join(scratch, 'a.jsonl');
    const b = join(scratch, 'b.json');
    const c = join(scratch, 'c.json');
    await writeFile(a, '{"instance_id":"x","patch":"p"}\n\n{"instance_id":"y","patch":"q"}\n');
    await writeFile(b, '[{"instance_id":"x","patch":"p"},{"instance_id":"y","patch":"q"}]');
    await writeFile(c, '{"x":{"patch":"p"},"y":{"patch":"q"}}');
    for (const file of [a, b, c]) {
      const rows = await readRows(file);
      expect(rows.map((at) => [at.row.instance_id, at.row.patch])).toEqual([
        ['x', 'p'],
        ['y', 'q'],
      ]);
    }
    expect((await readRows(a)).map((at) => at.line)).toEqual([1, 3]);
  });

  it('reads a single row object (one row per file)', async () => {
    const file = join(scratch, 'one.json');
    await writeFile(file, JSON.stringify({ instance_id: 'solo', patch: 'p' }, null, 2));
    expect((await readRows(file)).map((at) => at.row.instance_id)).toEqual(['solo']);
  });

  it('refuses a duplicate id and a broken line, naming file and line', async () => {
    const dup = join(scratch, 'dup.jsonl');
    await writeFile(dup, '{"instance_id":"x"}\n{"instance_id":"x"}\n');
    await expect(readRows(dup)).rejects.toThrow(/dup\.jsonl:2: instance_id: duplicate/);
    const broken = join(scratch, 'broken.jsonl');
    await writeFile(broken, '{"instance_id":"x"}\n{"instance_id":\n');
    await expect(readRows(broken)).rejects.toThrow(/broken\.jsonl:2: not a valid JSON line/);
  });
});

describe('readRows lists every bad row', () => {
  it('the bundled DockerLess rows with a broken line, a row without id and two duplicates: all four', async () => {
    const examples = join(import.meta.dirname, '..', '..', 'examples', 'swe-dockerless.jsonl');
    const lines = (await readFile(examples, 'utf8')).trim().split('\n');
    const { instance_id: _, ...noId } = JSON.parse(lines[1] as string) as Record<string, unknown>;
    const file = join(scratch, 'many.jsonl');
    await writeFile(
      file,
      [lines[0], '{"instance_id":', JSON.stringify(noId), lines[0], lines[2], lines[2], '[]'].join('\n'),
    );
    const error = (await readRows(file).catch((e: unknown) => e)) as InputError;
    expect(error).toBeInstanceOf(InputError);
    expect(error.issues.map((issue) => [issue.line, issue.field])).toEqual([
      [2, undefined],
      [3, 'instance_id'],
      [4, 'instance_id'],
      [6, 'instance_id'],
      [7, undefined],
    ]);
    expect(error.message.split('\n')[0]).toBe(`${file}: 5 problems:`);
    expect(error.issues[2]?.message).toMatch(
      /^duplicate instance_id "berth__csvline-1" \(first at line 1\)$/,
    );
  });
});

describe('readTestList', () => {
  const where = { file: 'f', field: 'FAIL_TO_PASS' };
  it('reads lists, JSON-encoded strings and Python reprs', () => {
    expect(readTestList(['a'], where)).toEqual(['a']);
    expect(readTestList('["a", "b[1-2]"]', where)).toEqual(['a', 'b[1-2]']);
    expect(readTestList(`['a', "it's"]`, where)).toEqual(['a', "it's"]);
    expect(readTestList('[]', where)).toEqual([]);
  });
  it('refuses anything else', () => {
    expect(() => readTestList('a, b', where)).toThrow(/FAIL_TO_PASS/);
    expect(() => readTestList(3, where)).toThrow(/FAIL_TO_PASS/);
  });
});
