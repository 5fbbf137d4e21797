/**
 * Ctrl-C during `berth eval`: exit 130, the verdicts finished so far are written (the summary is
 * marked partial) and no sample folder is left.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/functional/sandbox.ts';

const root = resolve(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'berth-eval-int-'));
// The sandbox users must reach their folders under it (it is the eval's TMPDIR).
chmodSync(dir, 0o711);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(detectSandbox().kind === 'none')('Ctrl-C during berth eval', () => {
  it('keeps the finished verdicts (partial) and removes every sample folder', async () => {
    const problems = join(dir, 'p.jsonl');
    const samples = join(dir, 's.jsonl');
    const problem = {
      task_id: 'S/0',
      prompt: 'def f():\n',
      entry_point: 'f',
      test: 'def check(c):\n    assert c() == 1\n',
    };
    writeFileSync(problems, `${JSON.stringify(problem)}\n`);
    // Each sample takes about 0.7 s: some finish before the interrupt, most do not.
    const rows = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({
        task_id: 'S/0',
        completion: `    import time\n    time.sleep(0.7)\n    return ${i % 2}\n`,
      }),
    );
    writeFileSync(samples, `${rows.join('\n')}\n`);
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'berth.js'), 'eval', '--problems', problems, '--samples', samples, '-n', '1'],
      {
        cwd: dir,
        env: { ...process.env, CI: '1', TMPDIR: dir },
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    await new Promise((r) => setTimeout(r, 5000));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    expect(code).toBe(130);
    expect(stderr).toMatch(/interrupted: \d+ of 30 verdicts written to .*s\.jsonl_results\.jsonl \(partial/);
    const results = readFileSync(`${samples}_results.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThan(30);
    for (const row of results) expect(typeof row.passed).toBe('boolean');
    const summary = JSON.parse(readFileSync(`${samples}_berth.json`, 'utf8'));
    expect(summary).toMatchObject({ partial: true, samples: 30, samples_done: results.length });
    expect(existsSync(join(dir, 'berth-functional', `p${child.pid}`))).toBe(false);
  }, 60_000);
});
