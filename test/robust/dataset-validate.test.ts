import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDir, hasData } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const example = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));

function berth(...args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('berth dataset validate: empty datasets and rows that cannot be checked', () => {
  it('an empty dataset is refused, exit 2 naming the file', async () => {
    const file = join(await temp.make('berth-robust-'), 'empty.jsonl');
    await writeFile(file, '');
    const result = berth('dataset', 'validate', file);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: the dataset holds no row`);
    expect(result.stdout).not.toContain('0/0 valid');
  });

  it('a row without snapshot is "not checked" with the reason, not valid', async () => {
    const dir = await temp.make('berth-robust-');
    const row = JSON.parse(readFileSync(example, 'utf8').split('\n')[0] as string) as Record<string, unknown>;
    delete row.dockerless;
    // Without a `version`, SWE-bench's specs give no command for this repository either.
    delete row.version;
    const file = join(dir, 'bare.jsonl');
    await writeFile(file, `${JSON.stringify(row)}\n`);
    const result = berth('dataset', 'validate', file, '--json');
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ total: 1, valid: 0, invalid: 0, not_checked: 1 });
    expect(report.rows[0].ok).toBe(false);
    expect(report.rows[0].notChecked).toContain('no snapshot (dockerless.files): use --repos DIR');
    expect(report.rows[0].notChecked).toContain('no test command');
    const text = berth('dataset', 'validate', file);
    expect(text.stdout).toContain('0/1 valid, 1 not checked (1x no snapshot');
  });

  it.skipIf(!hasData)('SWE-bench Lite (shared data): 0/5 valid, 5 not checked', () => {
    const result = berth('dataset', 'validate', join(dataDir, 'swebench', 'swe-bench-lite-test.json'));
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('0/5 valid, 5 not checked');
    expect(result.stdout).not.toContain('5/5 valid');
  });
});
