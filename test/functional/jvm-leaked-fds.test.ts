/**
 * No descriptor berth's own parent leaked without close-on-exec reaches a JVM sample: a real
 * `berth eval` started from bash with descriptors 100 and 1000 open on a marker file, a Java
 * sample (fast path: its own runner JVM) that looks through /proc/self/fd. Needs a JDK 17+.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findJdk } from '../../src/functional/jvm/toolchain.ts';
import { berthWithLeakedFds } from '../helpers/leaky-parent.ts';

const jdk = await findJdk().then(
  () => true,
  (err: Error) => {
    console.warn(`skipping JVM tests: ${err.message}`);
    return false;
  },
);
const dir = mkdtempSync(join(tmpdir(), 'berth-jvm-fds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const leaked = join(dir, 'leaked-by-the-parent');
writeFileSync(leaked, 'secret\n');

const problem = {
  task_id: 'Java/1',
  language: 'java',
  prompt: 'import java.io.File;\nimport java.nio.file.Files;\nclass Sol {\n    static boolean ok() {\n',
  canonical_solution:
    '        for (File f : new File("/proc/self/fd").listFiles()) {\n' +
    '            String n = f.getName(), l = "";\n' +
    '            try { l = Files.readSymbolicLink(f.toPath()).toString(); } catch (Exception e) { }\n' +
    '            if (n.equals("100") || n.equals("1000") || l.contains("leaked-by-the-parent")) throw new RuntimeException("leaked: " + n + " " + l);\n' +
    '        }\n        return true;\n    }\n}\n',
  test: '\nclass Main {\n    public static void main(String[] args) {\n        if (!Sol.ok()) throw new RuntimeException("wrong");\n    }\n}\n',
  entry_point: 'ok',
};

describe.skipIf(!jdk)("JVM runner: descriptors leaked by berth's parent", () => {
  it('do not reach the sample', () => {
    const problems = join(dir, 'problems.jsonl');
    writeFileSync(problems, `${JSON.stringify(problem)}\n`);
    const out = berthWithLeakedFds(
      leaked,
      ['eval', '--problems', problems, '-a', 'oracle', '--jobs-dir', join(dir, 'jobs')],
      dir,
    );
    expect(out.status, out.stderr).toBe(0);
    const [row] = readFileSync(join(dir, 'jobs', 'eval-oracle-problems.jsonl_results.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { passed: boolean; result: string });
    expect(row?.result).toBe('passed');
  }, 300_000);
});
