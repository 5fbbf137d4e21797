/**
 * `berth eval` and `berth run` refuse options that would overwrite their input, crash on a folder,
 * or overflow a Node timer (which fires at once above 2^31 - 1 ms), with exit 2 naming the option.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withTimeout } from '../../src/util/with-timeout.ts';

const root = resolve(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'berth-eval-guards-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const problems = join(dir, 'problems.jsonl');
copyFileSync(join(root, 'test', 'fixtures', 'functional', 'humaneval-2.jsonl'), problems);
const original = readFileSync(problems, 'utf8');

function berth(args: string[]) {
  return spawnSync(process.execPath, [join(root, 'bin', 'berth.js'), ...args], {
    encoding: 'utf8',
    cwd: dir,
    timeout: 120_000,
    env: { ...process.env, CI: '1' },
  });
}

describe('berth eval refuses bad outputs and options before running anything', () => {
  it('--out naming the problems file (also through another path) is refused; the file is intact', () => {
    for (const out of [problems, join(dir, '.', 'sub', '..', 'problems.jsonl')]) {
      mkdirSync(join(dir, 'sub'), { recursive: true });
      const run = berth(['eval', '--problems', problems, '-a', 'oracle', '--out', out]);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/--out: .* is the --problems file/);
      expect(readFileSync(problems, 'utf8')).toBe(original);
    }
  });

  it('--out naming a folder is refused with a message and leaves no temporary file', () => {
    const folder = join(dir, 'outdir');
    mkdirSync(folder, { recursive: true });
    const run = berth(['eval', '--problems', problems, '-a', 'oracle', '--out', folder]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--out: .* is a folder/);
    expect(readdirSync(folder)).toEqual([]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('--pass-at "" is refused', () => {
    const run = berth([
      'eval',
      '--problems',
      problems,
      '-a',
      'oracle',
      '--out',
      join(dir, 'o.jsonl'),
      '--pass-at',
      '',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--pass-at');
  });

  it('a --timeout longer than a timer holds is refused, naming the option', () => {
    const run = berth([
      'eval',
      '--problems',
      problems,
      '-a',
      'nop',
      '--out',
      join(dir, 'o.jsonl'),
      '--timeout',
      '3000000',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--timeout: at most \d+ s/);
  });
});

describe('berth run refuses multipliers that overflow a timer', () => {
  const task = join(root, 'test', 'fixtures', 'harbor', 'tasks', 'calc');
  it('--timeout-multiplier 2000 (agent install 1800 s x 2000) is refused, naming it', () => {
    const run = berth(['run', '-p', task, '--jobs-dir', join(dir, 'jobs'), '--timeout-multiplier', '2000']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--timeout-multiplier 2000: .* would be 3600000 s; a timeout can be at most/);
  });
  it('--verifier-timeout-multiplier 100000 is refused, naming it', () => {
    const run = berth([
      'run',
      '-p',
      task,
      '--jobs-dir',
      join(dir, 'jobs'),
      '--verifier-timeout-multiplier',
      '100000',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /--verifier-timeout-multiplier: the verifier timeout of .* would be 6000000 s/,
    );
  });
});

describe('withTimeout', () => {
  it('does not fire early for a delay longer than one Node timer holds (and still fires a short one)', async () => {
    let fired = false;
    const never = new Promise<void>(() => {});
    withTimeout(never, 3_000_000, () => new Error('fired')).catch(() => {
      fired = true;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(fired).toBe(false);
    await expect(withTimeout(new Promise(() => {}), 0.05, () => new Error('fired'))).rejects.toThrow('fired');
  });
});
