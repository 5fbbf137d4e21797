/**
 * The runner JVM runs as a slot's unprivileged host uid (berth as root): its scratch folder is
 * that uid's and 0700, and nothing the sample writes there is root's or setuid-root on the host.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import type { JvmVerdict } from '../../src/functional/jvm/jvm-types.ts';
import { findJdk } from '../../src/functional/jvm/toolchain.ts';

const jdk = await findJdk().then(
  () => true,
  () => false,
);

interface Seen {
  path: string;
  uid: number;
  mode: number;
}

/** Every runner scratch folder under `base` and every file in one (as root sees them). */
function scratchEntries(base: string): Seen[] {
  const out: Seen[] = [];
  const look = (path: string) => {
    try {
      const st = statSync(path);
      out.push({ path, uid: st.uid, mode: st.mode & 0o7777 });
    } catch {}
  };
  for (const root of readdirSync(base).filter((n) => n.startsWith('berth-jvm-'))) {
    let scratches: string[] = [];
    try {
      scratches = readdirSync(join(base, root)).filter((n) => n.startsWith('scratch-'));
    } catch {}
    for (const s of scratches) {
      const dir = join(base, root, s);
      look(dir);
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {}
      for (const n of names) look(join(dir, n));
    }
  }
  return out;
}

describe('JVM runner identity', () => {
  it('runs as an unprivileged slot uid: its scratch folder and files are that uid, 0700, no setuid-root', async (ctx) => {
    if (!jdk) ctx.skip('no JDK 17+');
    if (process.getuid?.() !== 0) ctx.skip("berth is not root: the runner runs as berth's own uid");
    // A temp folder of this test's own, so that other runs' runners are not seen.
    const base = mkdtempSync(join(tmpdir(), 'berth-jvm-identity-'));
    chmodSync(base, 0o755);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = base;
    const seen = new Map<string, Seen>();
    const poll = setInterval(() => {
      for (const e of scratchEntries(base)) seen.set(e.path, e);
    }, 50);
    let verdict: JvmVerdict | undefined;
    try {
      [verdict] = await runFast(
        [
          {
            key: 'identity',
            language: 'java',
            prompt: 'class Main {\n    static int add(int a, int b) {\n',
            completion: [
              '        try {',
              '            java.io.File f = new java.io.File(System.getProperty("java.io.tmpdir"), "mine.txt");',
              '            java.nio.file.Files.writeString(f.toPath(), "x");',
              '            f.setExecutable(true, false);',
              '            Thread.sleep(1500);',
              '            System.out.print("wrote");',
              '        } catch (Exception e) { System.out.print("ERR:" + e); }',
              '        return a + b;',
              '    }',
              '',
            ].join('\n'),
            test: '    public static void main(String[] args) {\n        if (add(2, 3) != 5) throw new RuntimeException("bad");\n    }\n}\n',
          },
        ],
        { workers: 1 },
      );
    } finally {
      clearInterval(poll);
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
      rmSync(base, { recursive: true, force: true });
    }
    if (verdict?.sandbox !== 'bwrap') ctx.skip(`runner sandbox is ${verdict?.sandbox}, not bwrap`);
    expect(verdict).toMatchObject({ status: 'passed', message: '' });
    expect(verdict?.stdout).toBe('wrote');
    const entries = [...seen.values()];
    const written = entries.filter((e) => e.path.endsWith('/mine.txt'));
    expect(written.length).toBe(1);
    // Every scratch folder (spares too) and every file in one: a slot's uid, never root's.
    expect(entries.filter((e) => e.uid === 0)).toEqual([]);
    const uid = written[0]!.uid;
    expect(uid).toBeGreaterThanOrEqual(1000);
    const scratch = entries.find((e) => written[0]!.path.startsWith(`${e.path}/`));
    expect(scratch).toMatchObject({ uid, mode: 0o700 });
    expect(entries.filter((e) => (e.mode & 0o6000) !== 0)).toEqual([]);
  }, 300_000);
});
