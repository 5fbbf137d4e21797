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
 * multi-swe-bench#52) still counts, and so does every further event run into
 * it (`...negates() PASSEDcom.example.CalcTest > squares() FAILED`: two
 * events). A line that holds `FAILED` after a ` > ` name but gives no event is
 * named in a warning, never silently dropped. Task lines
 * (`> Task :app:test FAILED`) are not tests. `N tests completed, M failed` is
 * checked against the results.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestStatus } from './types.ts';

const NAME_ONLY = /^(\S[^>]*? > .+?)$/;
const STATUS_ONLY = /^(PASSED|FAILED|SKIPPED)$/;
// A status word after a space, then the end, or text run into it without a space.
const STATUS_WORD = / (PASSED|FAILED|SKIPPED)(?=$|\S)/g;
// What may follow a status without a space: another event (`com.x.T > m()`), or other output
// starting a sentence (`Picked up ...`). Anything else means the word is part of a name.
const GLUED_EVENT = /^[^\s>]+ > /;
const GLUED_TEXT = /^[A-Z][a-z]/;

/**
 * The test events on one console line, in order, and what follows the last
 * one (a name still waiting for its status, or other output).
 */
export function gradleEvents(line: string): {
  events: { printed: string; status: TestStatus }[];
  rest: string;
} {
  const events: { printed: string; status: TestStatus }[] = [];
  let start = 0;
  for (;;) {
    const segment = line.slice(start);
    if (!/^\S/.test(segment) || !segment.includes(' > ')) break;
    let found: { at: number; word: TestStatus } | undefined;
    STATUS_WORD.lastIndex = 0;
    for (let m = STATUS_WORD.exec(segment); m; m = STATUS_WORD.exec(segment)) {
      const name = segment.slice(0, m.index);
      if (!name.includes(' > ')) continue;
      const after = segment.slice(m.index + 1 + (m[1] as string).length);
      if (after === '' || GLUED_EVENT.test(after) || GLUED_TEXT.test(after)) {
        found = { at: m.index, word: m[1] as TestStatus };
        break;
      }
    }
    if (!found) break;
    events.push({ printed: segment.slice(0, found.at), status: found.word });
    start += found.at + 1 + found.word.length;
    if (!GLUED_EVENT.test(line.slice(start))) break;
  }
  return { events, rest: line.slice(start) };
}

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
    const unread: number[] = [];
    const record = (printed: string, word: string): void => {
      const status = word as TestStatus;
      collector.add({ id: gradleId(printed), status, printed, line: lineNo });
    };
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        if (line.startsWith('> Task ') || line.trim() === '') continue;
        const { events, rest } = gradleEvents(line);
        if (events.length > 0) {
          for (const e of events) record(e.printed, e.status);
          // A name run into the last event whose status comes on a later line.
          pending = rest !== '' && NAME_ONLY.test(rest) && GLUED_EVENT.test(rest) ? rest : undefined;
          if (!pending && / FAILED/.test(rest) && rest.includes(' > ')) unread.push(lineNo);
          continue;
        }
        if (/ FAILED/.test(line) && line.includes(' > ') && !STATUS_ONLY.test(line.trim()))
          unread.push(lineNo);
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
    if (unread.length > 0)
      collector.warn(
        `${unread.length} line(s) hold FAILED after a test name but no test event could be read (line ${unread.slice(0, 5).join(', ')})`,
      );
    if (summary) {
      const total = Number(/^(\d+)/.exec(summary)?.[1]);
      if (total !== collector.size)
        collector.warn(`Gradle reports "${summary}" but ${collector.size} test(s) were parsed`);
    }
    return collector.result();
  },
};
