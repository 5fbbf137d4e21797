/**
 * Breaker round 6: a JVM runner's sandbox (bwrap --uid 65534 in a new user namespace, started by
 * berth as root) maps the sample to the host's uid 0, with the host's whole file system visible
 * read-only: a sample reads files only root may read (a 0600 file in a 0700 folder) and prints
 * them into its result. The sandbox should show the sample no more than the unprivileged uid the
 * docs name (docs/function-level-jvm.md: "new user (uid 65534)").
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import { findJdk } from '../../src/functional/jvm/toolchain.ts';

const jdk = await findJdk().then(
  () => true,
  () => false,
);

describe('JVM runner sandbox and root-only host files (breaker6)', () => {
  // Not under /tmp: the runner's sandbox hides the host's /tmp behind a tmpfs.
  const dir = mkdtempSync('/var/tmp/berth-breaker6-');
  chmodSync(dir, 0o700);
  const secret = join(dir, 'secret.txt');
  const canary = `root-only-canary-${process.pid}`;
  writeFileSync(secret, canary, { mode: 0o600 });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a sample cannot read a root-only file of the host', async (ctx) => {
    if (!jdk) ctx.skip('no JDK 17+');
    if (process.getuid?.() !== 0) ctx.skip('the hole needs berth running as root (as CI does)');
    const [verdict] = await runFast(
      [
        {
          key: 'reader',
          language: 'java',
          prompt: 'import java.nio.file.*;\nclass Main {\n    static int add(int a, int b) {\n',
          completion:
            `        try { System.out.print("LEAK:" + new String(Files.readAllBytes(Paths.get(${JSON.stringify(secret)})))); }\n` +
            '        catch (Exception e) { System.out.print("DENIED:" + e); }\n        return a + b;\n    }\n',
          test: '    public static void main(String[] args) {\n        if (add(2, 3) != 5) throw new RuntimeException("bad");\n    }\n}\n',
        },
      ],
      { workers: 1 },
    );
    if (verdict?.sandbox !== 'bwrap') ctx.skip(`runner sandbox is ${verdict?.sandbox}, not bwrap`);
    expect(verdict?.status).toBe('passed');
    expect(verdict?.stdout).toContain('DENIED:');
    expect(verdict?.stdout).not.toContain(canary);
  }, 300_000);
});
