/**
 * Breaker round 6: a JVM runner's sandbox maps the sample to the host's uid 0 (berth runs as root;
 * bwrap --uid 65534 in a new user namespace), and its scratch folder is a host folder
 * (/tmp/berth-jvm-X/scratch-Y, mode 0777 under a 0755 root). A sample copies a binary there and
 * sets its setuid bit: on the host it is a setuid-root program that any local user can run while
 * the sample lives. The sample's own threads may not start processes (the runner's security
 * manager), but an object's finalizer runs in the JVM's Finalizer thread (thread group "system",
 * outside the sample's), which the guard does not check.
 */
import { readdirSync, statSync } from 'node:fs';
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

/** Host files with the setuid bit owned by root in any runner's scratch folder. */
function setuidRootFiles(): string[] {
  const found: string[] = [];
  for (const root of readdirSync(tmpdir()).filter((n) => n.startsWith('berth-jvm-'))) {
    let scratches: string[] = [];
    try {
      scratches = readdirSync(join(tmpdir(), root)).filter((n) => n.startsWith('scratch-'));
    } catch {}
    for (const s of scratches) {
      let names: string[] = [];
      try {
        names = readdirSync(join(tmpdir(), root, s));
      } catch {}
      for (const n of names) {
        try {
          const st = statSync(join(tmpdir(), root, s, n));
          if (st.uid === 0 && (st.mode & 0o4000) !== 0) found.push(join(tmpdir(), root, s, n));
        } catch {}
      }
    }
  }
  return found;
}

describe('JVM runner sandbox: setuid files on the host (breaker6)', () => {
  it('a sample cannot leave a setuid-root program in a host folder', async (ctx) => {
    if (!jdk) ctx.skip('no JDK 17+');
    if (process.getuid?.() !== 0) ctx.skip('the hole needs berth running as root (as CI does)');
    const seen = new Set<string>();
    const poll = setInterval(() => {
      for (const f of setuidRootFiles()) seen.add(f);
    }, 50);
    let verdict: JvmVerdict | undefined;
    try {
      [verdict] = await runFast(
        [
          {
            key: 'suid',
            language: 'java',
            prompt: 'class Main {\n    static int add(int a, int b) {\n',
            completion: [
              '        try {',
              '            for (int i = 0; i < 20 && !done; i++) { new F(); System.gc(); System.runFinalization(); Thread.sleep(50); }',
              '            Thread.sleep(2000);',
              '        } catch (Exception e) { System.out.print("DENIED:" + e); }',
              '        System.out.print(done ? "made" : "not made");',
              '        return a + b;',
              '    }',
              '    static volatile boolean done;',
              '    static class F {',
              '        @SuppressWarnings("removal") protected void finalize() throws Throwable {',
              '            if (done) return;',
              '            done = true;',
              '            new ProcessBuilder("sh", "-c", "cp /bin/cat ./cat && chmod 4755 ./cat").start().waitFor();',
              '        }',
              '    }',
              '    static int unused() {',
              '        return 0;',
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
    }
    if (verdict?.sandbox !== 'bwrap') ctx.skip(`runner sandbox is ${verdict?.sandbox}, not bwrap`);
    expect([...seen]).toEqual([]);
  }, 300_000);
});
