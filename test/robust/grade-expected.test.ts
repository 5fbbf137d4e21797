import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { gradeFiles } from '../../src/cli/grade-files.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const example = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const tap = ['TAP version 13', 'ok 1 - plain fields', 'ok 2 - another delimiter', '1..2', ''].join('\n');

describe('berth grade reads expected rows in every form berth run reads', () => {
  it('a JSONL dataset with --instance (examples/swe-dockerless.jsonl)', async () => {
    const dir = await temp.make('berth-robust-');
    const report = join(dir, 'x.tap');
    await writeFile(report, tap);
    const out = await gradeFiles({ expected: example, reports: [report], instanceId: 'berth__csvline-1' });
    expect(out.rules).toBe('swebench');
    expect(out.categories.FAIL_TO_PASS?.expected).toBe(8);
    expect(out.categories.PASS_TO_PASS).toMatchObject({ expected: 9, passed: 2 });
    await expect(gradeFiles({ expected: example, reports: [report] })).rejects.toThrow(
      'holds 4 rows; name one with --instance',
    );
  });

  it('an object keyed by instance_id with Python-repr lists; a bad list names its line', async () => {
    const dir = await temp.make('berth-robust-');
    const report = join(dir, 'x.tap');
    await writeFile(report, tap);
    const keyed = join(dir, 'keyed.json');
    await writeFile(
      keyed,
      JSON.stringify({ 'a-1': { FAIL_TO_PASS: "['plain fields']", PASS_TO_PASS: '[]' } }, null, 2),
    );
    const out = await gradeFiles({ expected: keyed, reports: [report], instanceId: 'a-1' });
    expect(out.resolved).toBe(true);
    const jsonl = join(dir, 'rows.jsonl');
    await writeFile(
      jsonl,
      [
        JSON.stringify({ instance_id: 'a-1', FAIL_TO_PASS: ['plain fields'], PASS_TO_PASS: [] }),
        '',
        JSON.stringify({ instance_id: 'b-1', FAIL_TO_PASS: 7, PASS_TO_PASS: [] }),
      ].join('\n'),
    );
    await expect(gradeFiles({ expected: jsonl, reports: [report], instanceId: 'b-1' })).rejects.toThrow(
      `${jsonl}:3: FAIL_TO_PASS`,
    );
    await writeFile(jsonl, '{"instance_id": "a-1"}\n{oops\n');
    await expect(gradeFiles({ expected: jsonl, reports: [report], instanceId: 'a-1' })).rejects.toThrow(
      `${jsonl}:2`,
    );
  });
});
