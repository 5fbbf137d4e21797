/**
 * Every temp folder berth makes is recorded under its owner before it exists (src/util/leftovers.ts
 * `ownedTempDir`), so a `kill -9` at any moment leaves no folder that `berth clean` cannot find.
 * A real process making folders in a loop is killed at arbitrary moments.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const leftovers = fileURLToPath(new URL('../../src/util/leftovers.ts', import.meta.url));

/** Paths recorded in every owner's record under `tmp`. */
function recorded(tmp: string): Set<string> {
  const out = new Set<string>();
  let files: string[] = [];
  try {
    files = readdirSync(join(tmp, 'berth-owners'));
  } catch {
    return out;
  }
  for (const f of files)
    for (const line of readFileSync(join(tmp, 'berth-owners', f), 'utf8').split('\n'))
      if (line.trim()) out.add((JSON.parse(line) as { path: string }).path);
  return out;
}

describe('ownedTempDir under kill -9', () => {
  it('no folder is ever left without its record, wherever the kill lands', async () => {
    const tmp = await temp.make('berth-owned-k9-');
    for (let round = 0; round < 8; round++) {
      // Sixteen loops at once: many folders are on their way (in libuv's threads) when the kill lands.
      const script = `import { ownedTempDir } from ${JSON.stringify(leftovers)};\nconst loop = async () => { for (;;) await ownedTempDir('berth-k9-'); };\nawait Promise.all(Array.from({ length: 16 }, loop));\n`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, TMPDIR: tmp },
        stdio: 'ignore',
      });
      // Kill once it has made some folders, at a moment that differs every round.
      const deadline = Date.now() + 60_000;
      while (readdirSync(tmp).filter((n) => n.startsWith('berth-k9-')).length < 20 * (round + 1)) {
        if (Date.now() > deadline) throw new Error('the child made no folders');
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setTimeout(r, round * 7));
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));
    }
    const made = readdirSync(tmp)
      .filter((n) => n.startsWith('berth-k9-'))
      .map((n) => join(tmp, n));
    expect(made.length).toBeGreaterThan(100);
    const known = recorded(tmp);
    expect(made.filter((dir) => !known.has(dir))).toEqual([]);
  });
});
