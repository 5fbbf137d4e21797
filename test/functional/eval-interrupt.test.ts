/**
 * Ctrl-C during `berth eval`: exit 130, the verdicts finished so far are written (the summary is
 * marked partial) and no sample folder is left. `kill -9` during `berth eval`: the sample folders
 * it left are recorded under its owner and `berth clean` removes them (issue 10 §4).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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
    // Interrupt once samples are being judged (a sample folder exists) and a few had time to
    // finish: a fixed delay from the start was not enough on a loaded machine.
    const samplesRoot = join(dir, 'berth-functional', `berth-p${child.pid}`);
    const deadline = Date.now() + 60_000;
    while (!(existsSync(samplesRoot) && readdirSync(samplesRoot).length > 0)) {
      if (Date.now() > deadline) throw new Error(`no sample started: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 3000));
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
    expect(existsSync(samplesRoot)).toBe(false);
  }, 60_000);

  it('kill -9: the sample folders the dead eval left are removed by berth clean, not before', async () => {
    const home = join(dir, 'kill9');
    mkdirSync(home, { mode: 0o711 });
    chmodSync(home, 0o711);
    const problems = join(home, 'p.jsonl');
    const samples = join(home, 's.jsonl');
    writeFileSync(
      problems,
      `${JSON.stringify({ task_id: 'S/0', prompt: 'def f():\n', entry_point: 'f', test: 'def check(c):\n    assert c() == 1\n' })}\n`,
    );
    const rows = Array.from({ length: 8 }, () =>
      JSON.stringify({ task_id: 'S/0', completion: '    import time\n    time.sleep(30)\n    return 1\n' }),
    );
    writeFileSync(samples, `${rows.join('\n')}\n`);
    const env = { ...process.env, CI: '1', TMPDIR: home };
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'berth.js'), 'eval', '--problems', problems, '--samples', samples, '-n', '1'],
      { cwd: home, env, stdio: 'ignore' },
    );
    const sampleRoot = join(home, 'berth-functional', `berth-p${child.pid}`);
    // Wait until a sample folder exists (a sample is running: it sleeps 30 s).
    const deadline = Date.now() + 30_000;
    while (!(existsSync(sampleRoot) && readdirSync(sampleRoot).length > 0)) {
      if (Date.now() > deadline) throw new Error(`no sample folder under ${sampleRoot}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // While the eval lives, berth clean spares its folder.
    const early = spawnSync(process.execPath, [join(root, 'bin', 'berth.js'), 'clean'], {
      env,
      encoding: 'utf8',
    });
    expect(early.status, early.stderr).toBe(0);
    expect(existsSync(sampleRoot)).toBe(true);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    expect(existsSync(sampleRoot), 'the killed eval left its sample folder').toBe(true);
    const clean = spawnSync(process.execPath, [join(root, 'bin', 'berth.js'), 'clean'], {
      env,
      encoding: 'utf8',
    });
    expect(clean.status, clean.stderr).toBe(0);
    expect(existsSync(sampleRoot), `berth clean removed ${sampleRoot}`).toBe(false);
  }, 60_000);
});
