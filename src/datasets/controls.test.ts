import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { makeControls, writeControls } from './controls.ts';
import { countHunks } from './patches.ts';
import { readRows } from './rows.ts';

const examples = new URL('../../examples/swe-dockerless.jsonl', import.meta.url).pathname;
const scratch = await mkdtemp(join(tmpdir(), 'berth-controls-test-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('makeControls on the bundled sample', async () => {
  const rows = await readRows(examples);
  const controls = makeControls(rows);

  it('writes one empty prediction per instance', () => {
    expect(controls.predictions.empty.map((p) => p.instance_id)).toEqual(
      rows.map((at) => at.row.instance_id),
    );
    expect(controls.predictions.empty.every((p) => p.model_patch === '')).toBe(true);
  });

  it('gives each instance the gold patch of the next one, never its own', () => {
    controls.predictions.cross.forEach((prediction, index) => {
      expect(prediction.model_patch).toBe(rows[(index + 1) % rows.length]?.row.patch);
      expect(prediction.model_patch).not.toBe(rows[index]?.row.patch);
    });
  });

  it('gives each instance its gold patch minus one hunk', () => {
    expect(controls.skipped).toEqual([]);
    controls.predictions.partial.forEach((prediction, index) => {
      const gold = rows[index]?.row.patch as string;
      expect(countHunks(prediction.model_patch)).toBe(countHunks(gold) - 1);
      expect(gold.startsWith(prediction.model_patch.split('@@')[0] as string)).toBe(true);
    });
  });

  it('writes SWE-bench predictions JSONL files', async () => {
    const paths = await writeControls(controls, scratch);
    const lines = (await readFile(paths.partial, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(Object.keys(lines[0]).sort()).toEqual(['instance_id', 'model_name_or_path', 'model_patch']);
    expect(lines).toHaveLength(rows.length);
  });
});

describe('makeControls on bad input', () => {
  it('names the file, line and field of a row without a gold patch', async () => {
    const file = join(scratch, 'bad.jsonl');
    await writeFile(file, '{"instance_id":"a","patch":"x"}\n{"instance_id":"b"}\n');
    const rows = await readRows(file);
    expect(() => makeControls(rows)).toThrow(InputError);
    expect(() => makeControls(rows)).toThrow(/bad\.jsonl:line 2 \(field `patch`\)/);
  });

  it('skips cross for a single instance', async () => {
    const rows = (await readRows(examples)).slice(0, 1);
    const controls = makeControls(rows);
    expect(controls.predictions.cross).toEqual([]);
    expect(controls.skipped).toEqual([
      { control: 'cross', instance_id: rows[0]?.row.instance_id, reason: expect.any(String) },
    ]);
  });
});
