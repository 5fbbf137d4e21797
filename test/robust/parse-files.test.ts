import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseOutputSchema } from '../../src/cli/output-schemas.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

function berth(cwd: string, ...args: string[]) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, CI: '1' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function scratch(): Promise<string> {
  const dir = await temp.make('berth-robust-');
  await writeFile(join(dir, 'ok.tap'), 'TAP version 13\nok 1 - adds\n1..1\n');
  await writeFile(join(dir, 'todo.tap'), 'TAP version 13\nnot ok 1 - subtracts\n1..1\n');
  await writeFile(join(dir, 'empty.txt'), '');
  await writeFile(join(dir, 'words.txt'), 'nothing that looks like a test run\n');
  return dir;
}

describe('berth parse: every file is reported', () => {
  it('a missing file among others: the others are parsed, the error named, exit 2 at the end', async () => {
    const dir = await scratch();
    const r = berth(dir, 'parse', 'ok.tap', 'nope.txt', 'todo.tap');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('ok.tap: tap, 1 passed');
    expect(r.stdout).toContain('todo.tap: tap, 0 passed, 1 failed');
    expect(r.stderr).toContain('nope.txt');
    expect(r.stderr).toContain('1 of 3 file(s) could not be parsed');
  });

  it('a named format that finds nothing warns; an empty file says so; --json stays valid', async () => {
    const dir = await scratch();
    const none = berth(dir, 'parse', '-f', 'pytest', 'words.txt');
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('warning: no pytest test results found in words.txt');
    const empty = berth(dir, 'parse', 'empty.txt', '--json');
    expect(empty.code).toBe(0);
    const out = parseOutputSchema.parse(JSON.parse(empty.stdout));
    expect(out.warnings).toContain('empty.txt is empty');
  });

  it('an unknown format lists parser names only and points to --list', async () => {
    const dir = await scratch();
    const r = berth(dir, 'parse', '-f', 'nosuch', 'ok.tap');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown report format "nosuch"; known formats: pytest, tap, junit');
    expect(r.stderr).toContain('berth parse --list');
    expect(r.stderr).not.toContain('pytest-console');
    expect(r.stderr.length).toBeLessThan(400);
  });
});
