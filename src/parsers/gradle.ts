/**
 * Gradle console output with `testLogging { events "passed", "skipped", "failed" }`.
 *
 * Gradle prints `com.example.CalcTest > adds() PASSED`. Ids follow JUnit XML's
 * `classname.name` so they match Gradle's XML reports and the Kotlin
 * Benchmark's expected_tests.json: `com.example.CalcTest.adds()`; a nested
 * class (`Outer > Inner > test() PASSED`) becomes `Outer$Inner.test()`. The
 * line as Gradle printed it (SWE-bench's and Multi-SWE-bench's key,
 * `Class > method`) is kept in `printed`. `PASSED`, `FAILED`, `SKIPPED`; a
 * status on a later line of its own (interleaved output, SWE-bench's
 * gradle_custom fix) belongs to the last name printed without one; a status
 * run into other output (`...testX PASSEDPicked up JAVA_TOOL_OPTIONS...`,
 * multi-swe-bench#52) still counts. Task lines (`> Task :app:test FAILED`)
 * are not tests. `N tests completed, M failed` is checked against the results.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestStatus } from './types.ts';

const RESULT = /^(\S.*? > .+?) (PASSED|FAILED|SKIPPED)(?:$|(?=[A-Z][a-z]))/;
const NAME_ONLY = /^(\S[^>]*? > .+?)$/;
const STATUS_ONLY = /^(PASSED|FAILED|SKIPPED)$/;

/**
 * `A > m()` -> `A.m()`; `A > B > m()` -> `A$B.m()`; a parameterised
 * invocation `A > m(int) > [2] 3` -> `A.m(int)[2]` (Gradle's JUnit XML name).
 */
export function gradleId(printed: string): string {
  const parts = printed.split(' > ');
  const last = parts.pop() as string;
  const invocation = /^\[(\d+)\]/.exec(last);
  if (invocation && parts.length >= 2 && (parts[parts.length - 1] as string).endsWith(')')) {
    const method = parts.pop() as string;
    return `${parts.join('$')}.${method}[${invocation[1]}]`;
  }
  return `${parts.join('$')}.${last}`;
}

export const gradleParser: Parser = {
  name: 'gradle',
  aliases: ['gradle-console', 'gradle-test'],
  description: 'Gradle console test events (testLogging passed/skipped/failed)',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\S.* > .+ (PASSED|FAILED|SKIPPED)$/m.test(text)) return 0.9;
    if (/^> Task :\S*test\b/m.test(text)) return 0.6;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('gradle', { keepElements: options?.keepElements });
    let pending: string | undefined;
    let lineNo = 0;
    let summary: string | undefined;
    const record = (printed: string, word: string): void => {
      const status = word as TestStatus;
      collector.add({ id: gradleId(printed), status, printed, line: lineNo });
    };
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        if (line.startsWith('> Task ') || line.trim() === '') continue;
        const m = RESULT.exec(line);
        if (m) {
          record(m[1] as string, m[2] as string);
          pending = undefined;
          continue;
        }
        const statusOnly = STATUS_ONLY.exec(line.trim());
        if (statusOnly && pending !== undefined) {
          record(pending, statusOnly[1] as string);
          pending = undefined;
          continue;
        }
        const completed = /^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?/.exec(line);
        if (completed) {
          summary = line;
          continue;
        }
        if (NAME_ONLY.test(line) && !line.startsWith(' ') && /\S > \S/.test(line)) pending = line;
      }
    }
    if (summary) {
      const total = Number(/^(\d+)/.exec(summary)?.[1]);
      if (total !== collector.size)
        collector.warn(`Gradle reports "${summary}" but ${collector.size} test(s) were parsed`);
    }
    return collector.result();
  },
};
