import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkPrerequisites, demoPassed, runDemo, SAMPLE } from './demo.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'berth-demo-test-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('berth demo', () => {
  it('finds its prerequisites on this machine', async () => {
    expect(await checkPrerequisites()).toEqual([]);
  });

  it('gold resolves and every control resolves none on the two JavaScript instances', async () => {
    const rows = (await readFile(SAMPLE, 'utf8')).trim().split('\n');
    const js = rows.filter((line) => /"instance_id":"berth__(csvline|toposort)-1"/.test(line));
    expect(js).toHaveLength(2);
    const dataset = join(scratch, 'js.jsonl');
    await writeFile(dataset, `${js.join('\n')}\n`);
    let printed = '';
    const runs = await runDemo({ dataset, concurrency: 2, write: (text) => (printed += text) });
    expect(runs.map((r) => [r.name, r.resolved, r.total])).toEqual([
      ['gold', 2, 2],
      ['empty', 0, 2],
      ['cross', 0, 2],
      ['partial', 0, 2],
    ]);
    const partial = runs.find((r) => r.name === 'partial');
    // Partial fixes get some FAIL_TO_PASS tests, never all of them.
    for (const result of partial?.results ?? []) {
      const f2p = result.berth.FAIL_TO_PASS as { passed: number; total: number };
      expect(f2p.passed).toBeGreaterThan(0);
      expect(f2p.passed).toBeLessThan(f2p.total);
    }
    expect(demoPassed(runs)).toBe(true);
    expect(printed).toMatch(
      /== gold[\s\S]*resolved 2\/2 \(100\.0%\)[\s\S]*== partial control[\s\S]*OK: gold resolves 2\/2/,
    );
  });

  it('exits 2 with the Debian install line when pytest is missing', () => {
    // A PATH whose python3 has no pytest module: a shim that fails `-m pytest`.
    const shim = join(scratch, 'bin');
    spawnSync('mkdir', ['-p', shim]);
    spawnSync('sh', [
      '-c',
      `printf '#!/bin/sh\\n[ "$1" = -m ] && exit 1\\nexit 0\\n' > ${shim}/python3 && chmod +x ${shim}/python3`,
    ]);
    const result = spawnSync('node', [bin, 'demo'], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${shim}:${process.env.PATH}` },
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('pytest for python3: sudo apt-get install -y python3-pytest');
  });
});
