import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { loadSwebench } from '../tasks/swebench/load.ts';
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
    const loadable = { test_patch: '', FAIL_TO_PASS: [], PASS_TO_PASS: [] };
    await writeFile(
      file,
      `${JSON.stringify({ instance_id: 'a', patch: 'x', ...loadable })}\n${JSON.stringify({ instance_id: 'b', ...loadable })}\n`,
    );
    const rows = await readRows(file);
    expect(() => makeControls(rows)).toThrow(InputError);
    expect(() => makeControls(rows)).toThrow(/bad\.jsonl:2: patch/);
  });

  it('refuses rows `berth run` refuses, up front, with the message `berth run` gives, listing all of them', async () => {
    const sample = (await readFile(examples, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    (sample[1] as Record<string, unknown>).FAIL_TO_PASS = 42;
    delete (sample[3] as Record<string, unknown>).test_patch;
    const file = join(scratch, 'broken-rows.json');
    await writeFile(file, JSON.stringify(sample, null, 2));
    const text = await readFile(file, 'utf8');
    const f2pLine = text.split('\n').indexOf('    "FAIL_TO_PASS": 42,') + 1;
    expect(f2pLine).toBeGreaterThan(0);
    const runError = (await loadSwebench(file).then(
      () => undefined,
      (e: unknown) => e,
    )) as InputError;
    expect(runError).toBeInstanceOf(InputError);
    let error: InputError | undefined;
    try {
      makeControls(await readRows(file));
    } catch (e) {
      error = e as InputError;
    }
    expect(error).toBeInstanceOf(InputError);
    expect(error?.exitCode).toBe(2);
    // One rule in one place: word for word what `berth run` (the loader) says, every row listed.
    expect(error?.message).toBe(runError.message);
    expect(error?.message.split('\n')[0]).toBe(`${file}: 2 problems:`);
    // A missing field names its row's first line (the row's `{`).
    const rowStarts = text.split('\n').flatMap((line, index) => (line === '  {' ? [index + 1] : []));
    expect(error?.issues.map((issue) => [issue.line, issue.field])).toEqual([
      [f2pLine, '[1].FAIL_TO_PASS'],
      [rowStarts[3], '[3].test_patch'],
    ]);
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
