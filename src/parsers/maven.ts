/**
 * Maven surefire console output (`mvn test`, surefire 2.x and 3.x).
 *
 * Maven's console never lists passing methods, so results are at two
 * granularities, both with JUnit-style ids:
 * - every test class from its summary line (`Tests run: 5, Failures: 1,
 *   Errors: 0, Skipped: 1, ... -- in com.example.CalcTest`, or after
 *   `Running com.example.CalcTest` in older surefire): ERROR if any error,
 *   FAILED if any failure, SKIPPED if every test was skipped, else PASSED
 *   (Multi-SWE-bench's class rule); `kind: 'class'`;
 * - each failing or erroring method it names (`com.example.CalcTest.fails --
 *   Time elapsed: 0.01 s <<< FAILURE!`, surefire 2's
 *   `fails(com.example.CalcTest)  Time elapsed: ... <<< ERROR!`) as
 *   `com.example.CalcTest.fails`; methods printed without `<<<` (plain report
 *   format) are PASSED; `kind: 'method'`.
 * The final `Tests run:` total is checked against the classes' sum. `[INFO]`,
 * `[ERROR]`, `[WARNING]` prefixes and colours are removed.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestStatus } from './types.ts';

const PREFIX = /^\[(?:INFO|ERROR|WARNING|WARN|DEBUG)\] ?/;
const COUNTS =
  /^Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(?:, Time elapsed: [^<-]*?)?(?: <<< (?:FAILURE|ERROR)!)?(?: -{1,2} in (\S+))?\s*$/;
const METHOD3 =
  /^([\w$.]+)\.([^.\s(]+(?:\(.*?\))?(?:\[\d+\])?) -- Time elapsed: [\d.,]+ s(?:ec)?(?:\s+<<< (FAILURE|ERROR)!)?/;
const METHOD2 = /^(\S+?)\(([\w$.]+)\)\s+Time elapsed: [\d.,]+ s(?:ec)?(?:\s+<<< (FAILURE|ERROR)!)?/;

export const mavenParser: Parser = {
  name: 'maven',
  aliases: ['maven-console', 'mvn', 'surefire-console'],
  description: 'Maven surefire console summaries (class results, failing methods)',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^(?:\[\w+\] )?Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+/m.test(text)) return 0.9;
    if (/^\[INFO\] (?:Scanning for projects|Building |--- .*surefire)/m.test(text)) return 0.7;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('maven', { keepElements: options?.keepElements });
    let running: string | undefined;
    let lineNo = 0;
    let classTotal = 0;
    let finalTotal: number | undefined;
    let buildResult: string | undefined;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).replace(PREFIX, '').trimEnd();
        const run = /^Running (\S+)$/.exec(line);
        if (run) {
          running = run[1];
          continue;
        }
        const counts = COUNTS.exec(line);
        if (counts) {
          const [total, failures, errors, skipped] = [1, 2, 3, 4].map((i) => Number(counts[i]));
          const cls = counts[5] ?? (line.includes('Time elapsed') ? running : undefined);
          if (cls === undefined) {
            finalTotal = (finalTotal ?? 0) + (total as number);
            continue;
          }
          classTotal += total as number;
          if (total === 0) continue;
          let status: TestStatus = 'PASSED';
          if ((errors as number) > 0) status = 'ERROR';
          else if ((failures as number) > 0) status = 'FAILED';
          else if (skipped === total) status = 'SKIPPED';
          collector.add({
            id: cls,
            status,
            kind: 'class',
            tests: total,
            failures,
            errors,
            skipped,
            line: lineNo,
          });
          continue;
        }
        const m3 = METHOD3.exec(line);
        const m2 = m3 ? null : METHOD2.exec(line);
        if (m3 || m2) {
          const cls = (m3 ? m3[1] : m2?.[2]) as string;
          const method = (m3 ? m3[2] : m2?.[1]) as string;
          const word = m3 ? m3[3] : m2?.[3];
          const status: TestStatus = word === 'ERROR' ? 'ERROR' : word === 'FAILURE' ? 'FAILED' : 'PASSED';
          collector.add({ id: `${cls}.${method}`, status, kind: 'method', line: lineNo });
          continue;
        }
        const build = /^BUILD (SUCCESS|FAILURE)$/.exec(line);
        if (build) buildResult = build[1];
      }
    }
    if (finalTotal !== undefined && finalTotal !== classTotal) {
      collector.warn(`surefire's total is ${finalTotal} test(s) but the class lines add up to ${classTotal}`);
    }
    if (buildResult === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no BUILD SUCCESS / BUILD FAILURE line: the log looks cut short');
    }
    return collector.result();
  },
};
