/**
 * The fast JVM path on real programs: verdicts, batch isolation, hostile samples. Needs a JDK 17+
 * and the Kotlin compiler (`npm ci` installs the pinned npm package kotlin-compiler); skipped with
 * a message otherwise.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import type { JvmSample, JvmVerdict } from '../../src/functional/jvm/jvm-types.ts';
import { findJdk, findKotlin } from '../../src/functional/jvm/toolchain.ts';

const toolchains = await Promise.all([findJdk(), findKotlin()]).then(
  () => true,
  (err: Error) => {
    console.warn(`skipping JVM tests: ${err.message}`);
    return false;
  },
);

const PROMPT = '/**\n * Add two numbers.\n */\nfun add(a : Int, b : Int) : Int {\n';
const TEST =
  '\nfun main() {\n    var x0 : Int = add(2, 3);\n    if (x0 != 5) {\n        throw Exception("Exception -- test case 0 did not pass. x0 = " + x0)\n    }\n}\n';
const kt = (key: string, completion: string, test = TEST): JvmSample => ({
  key,
  language: 'kotlin',
  prompt: PROMPT,
  completion,
  test,
});

describe.skipIf(!toolchains)('fast JVM path', () => {
  const outside = mkdtempSync(join(tmpdir(), 'berth-jvm-outside-'));
  const victim = join(outside, 'keep-me.txt');
  let port = 0;
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.end();
  });
  let verdicts: Map<string, JvmVerdict>;

  beforeAll(async () => {
    writeFileSync(victim, 'precious');
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    const samples: JvmSample[] = [
      kt('ok', '    return a + b\n}'),
      kt('wrong', '    return a - b\n}'),
      kt('syntax', '    return a +* b\n}'),
      kt('unresolved', '    return plus(a, b)\n}'),
      kt('ok-after-bad', '    return b + a\n}'),
      kt('loop', '    while (true) {}\n}'),
      kt('exit0', '    System.exit(0)\n    return 0\n}'),
      kt('exit3', '    System.exit(3)\n    return a + b\n}'),
      kt(
        'alloc-10gb',
        '    val l = ArrayList<LongArray>()\n    repeat(14) { l.add(LongArray(100_000_000)) }\n    return l.size\n}',
      ),
      kt('fork', '    while (true) { ProcessBuilder("sh", "-c", "sleep 100").start() }\n}'),
      kt('socket', `    java.net.Socket("127.0.0.1", ${port}).close()\n    return a + b\n}`),
      kt('delete-outside', `    java.io.File(${JSON.stringify(victim)}).delete()\n    return a + b\n}`),
      kt('thread-left-running', '    Thread { while (true) {} }.start()\n    return a + b\n}'),
      kt('stdout', '    println("hello from the sample")\n    return a + b\n}'),
      kt('assert-test', '    return a - b\n}', '\nfun main() {\n    assert(add(2, 3) == 5)\n}\n'),
      {
        key: 'java-ok',
        language: 'java',
        prompt: 'import java.util.*;\nclass Add {\n    public static int add(int a, int b) {\n',
        completion: '        return a + b;\n    }\n}',
        test: '\nclass Main {\n    public static void main(String[] args) throws Exception {\n        if (Add.add(2, 3) != 5) throw new Exception("Exception -- test case 0 did not pass.");\n    }\n}\n',
      },
      {
        key: 'java-wrong',
        language: 'java',
        prompt: 'import java.util.*;\nclass Add {\n    public static int add(int a, int b) {\n',
        completion: '        return a * b;\n    }\n}',
        test: '\nclass Main {\n    public static void main(String[] args) throws Exception {\n        if (Add.add(2, 3) != 5) throw new Exception("Exception -- test case 0 did not pass.");\n    }\n}\n',
      },
      {
        key: 'java-compile-error',
        language: 'java',
        prompt: 'class Add {\n    public static int add(int a, int b) {\n',
        completion: '        return a + ;\n    }\n}',
        test: '\nclass Main {\n    public static void main(String[] args) {}\n}\n',
      },
    ];
    const list = await runFast(samples, { timeoutSeconds: 4, workers: 2 });
    verdicts = new Map(list.map((v) => [v.key, v]));
  }, 600_000);

  afterAll(() => {
    server.close();
    rmSync(outside, { recursive: true, force: true });
  });

  const v = (key: string) => verdicts.get(key)!;

  it('passes a correct sample and fails a wrong one with the test message', () => {
    expect(v('ok').status).toBe('passed');
    expect(v('ok').exitCode).toBe(0);
    expect(v('wrong').status).toBe('failed');
    expect(v('wrong').message).toContain('Exception -- test case 0 did not pass. x0 = -1');
  });

  it('fails only the samples that break the batch, with their own messages', () => {
    expect(v('syntax').status).toBe('compile_error');
    expect(v('syntax').message).toMatch(/^Main\.kt:5:\d+: error:/);
    expect(v('unresolved').status).toBe('compile_error');
    expect(v('unresolved').message).toContain("unresolved reference 'plus'");
    expect(v('unresolved').message).not.toContain('+*');
    expect(v('ok-after-bad').status).toBe('passed');
  });

  it('times out a sample that loops, and one that leaves a thread running, and goes on', () => {
    expect(v('loop').status).toBe('timed_out');
    expect(v('thread-left-running').status).toBe('timed_out');
    expect(v('stdout').status).toBe('passed');
  });

  it('turns System.exit into the exit status without killing the runner', () => {
    expect(v('exit0').status).toBe('passed');
    expect(v('exit3').status).toBe('failed');
    expect(v('exit3').exitCode).toBe(3);
  });

  it('fails a sample that allocates 10 GB with OutOfMemoryError', () => {
    expect(v('alloc-10gb').status).toBe('failed');
    expect(v('alloc-10gb').message).toContain('OutOfMemoryError');
  });

  it('refuses processes, sockets and deleting files outside the sample folder', () => {
    expect(v('fork').status).toBe('failed');
    expect(v('fork').message).toMatch(/SecurityException|IOException/);
    expect(v('socket').status).toBe('failed');
    expect(connections).toBe(0);
    expect(v('delete-outside').status).toBe('failed');
    expect(existsSync(victim)).toBe(true);
  });

  it('captures stdout', () => {
    expect(v('stdout').stdout).toBe('hello from the sample\n');
  });

  it('enables assertions when the test uses assert', () => {
    expect(v('assert-test').status).toBe('failed');
    expect(v('assert-test').message).toContain('AssertionError');
  });

  it('runs Java samples, each in its own package', () => {
    expect(v('java-ok').status).toBe('passed');
    expect(v('java-wrong').status).toBe('failed');
    expect(v('java-compile-error').status).toBe('compile_error');
    expect(v('java-compile-error').message).toContain('main.java:3: error');
  });
});
