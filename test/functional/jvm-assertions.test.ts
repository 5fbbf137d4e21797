/**
 * Every JVM test runs with assertions enabled, on the fast path and the reference path (issue 12):
 * a wrong completion must fail wherever the test's `assert` stands (a one-line `main`, after `;`,
 * inside a lambda; Java's `assert` statement), and a right one must pass. Needs a JDK 17+ and the
 * Kotlin compiler (`npm ci` installs kotlin-compiler); skipped with a message otherwise.
 */
import { describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import type { JvmSample } from '../../src/functional/jvm/jvm-types.ts';
import { runReference } from '../../src/functional/jvm/reference.ts';
import { findJdk, findKotlin } from '../../src/functional/jvm/toolchain.ts';

const toolchains = await Promise.all([findJdk(), findKotlin()]).then(
  () => undefined,
  (err: Error) => `the JVM toolchains are missing: ${err.message}`,
);

const KT_PROMPT = 'fun add(a : Int, b : Int) : Int {\n';
const RIGHT = '    return a + b\n}';
const WRONG = '    return a - b\n}';
const KT_TESTS: Record<string, string> = {
  'one-line-main': '\nfun main() { assert(add(2, 3) == 5) }\n',
  'after-semicolon': '\nfun main() {\n    val x = add(2, 3); assert(x == 5)\n}\n',
  'in-lambda': '\nfun main() {\n    listOf(2).forEach { assert(add(it, 3) == 5) }\n}\n',
};
const JAVA_PROMPT = 'class Add {\n    public static int add(int a, int b) {\n';
const JAVA_TEST =
  '\nclass Main { public static void main(String[] args) { int x = Add.add(2, 3); assert x == 5; } }\n';

const samples: JvmSample[] = [];
for (const [name, test] of Object.entries(KT_TESTS)) {
  samples.push({ key: `kt-${name}-wrong`, language: 'kotlin', prompt: KT_PROMPT, completion: WRONG, test });
  samples.push({ key: `kt-${name}-right`, language: 'kotlin', prompt: KT_PROMPT, completion: RIGHT, test });
}
samples.push(
  {
    key: 'java-wrong',
    language: 'java',
    prompt: JAVA_PROMPT,
    completion: '        return a * b;\n    }\n}',
    test: JAVA_TEST,
  },
  {
    key: 'java-right',
    language: 'java',
    prompt: JAVA_PROMPT,
    completion: '        return a + b;\n    }\n}',
    test: JAVA_TEST,
  },
);
const expected = Object.fromEntries(
  samples.map((s) => [s.key, s.key.endsWith('-right') ? 'passed' : 'failed']),
);

describe('JVM tests run with assertions enabled', () => {
  it('fast path: a wrong completion fails wherever the assert stands', async (ctx) => {
    if (toolchains) ctx.skip(toolchains);
    const verdicts = await runFast(samples, { workers: 2 });
    expect(Object.fromEntries(verdicts.map((v) => [v.key, v.status]))).toEqual(expected);
    for (const v of verdicts.filter((x) => x.status === 'failed'))
      expect(v.message).toContain('AssertionError');
  }, 600_000);

  it('reference path (--reference): the same verdicts', async (ctx) => {
    if (toolchains) ctx.skip(toolchains);
    // Each reference sample starts kotlinc cold: the after-`;` case is left to the fast path.
    const subset = samples.filter((s) => !s.key.startsWith('kt-after-semicolon'));
    const verdicts = await runReference(subset, { workers: 2 });
    expect(Object.fromEntries(verdicts.map((v) => [v.key, v.status]))).toEqual(
      Object.fromEntries(subset.map((s) => [s.key, expected[s.key]])),
    );
  }, 900_000);

  it('assertions: false reproduces mxeval exactly (no -ea): the wrong completions pass', async (ctx) => {
    if (toolchains) ctx.skip(toolchains);
    const off = await runFast(
      samples.filter((s) => s.key === 'kt-in-lambda-wrong' || s.key === 'java-wrong'),
      { workers: 2, assertions: false },
    );
    expect(off.map((v) => v.status)).toEqual(off.map(() => 'passed'));
  }, 600_000);
});
