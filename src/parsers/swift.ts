/**
 * `swift test` console output: XCTest (Linux and macOS forms) and Swift Testing.
 *
 * XCTest ids: `Class.method`. Linux prints `Test Case 'FooTests.testA' passed
 * (0.001 seconds)`; macOS prints `Test Case '-[Module.FooTests testA]'
 * passed (0.001 seconds).`, normalised to the same `FooTests.testA` (the
 * module is kept in `module`). `passed` PASSED, `failed` FAILED, `skipped`
 * SKIPPED; a case that started and never finished is ERROR (a crash) and the
 * log is truncated.
 *
 * Swift Testing ids: the test's name as printed, a function name
 * (`example()`, `add(_:_:)`) or a display name in quotes without the quotes
 * (`Food truck exists`); `Test X passed after`, `Test X failed after`,
 * `Test X skipped`; suites (`Suite X ...`) and the run summary are not
 * results. Parameterised tests (`Test f(x:) with 3 test cases passed`) are one id.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const XCTEST = /^Test Case '(.+?)' (started|passed|failed|skipped)(?: \((\d+(?:\.\d+)?) seconds\))?\.?$/;
const SWIFT_TESTING =
  /^\S+ Test (.+?)(?: with \d+ test cases?)? (started|passed|failed|skipped|recorded an issue)\b(?: after (\d+(?:\.\d+)?) seconds)?(.*)$/;

function xctestId(raw: string): { id: string; module?: string } {
  const objc = /^-\[(?:([\w.]+)\.)?(\w+) (\w+)\]$/.exec(raw);
  if (objc)
    return objc[1] ? { id: `${objc[2]}.${objc[3]}`, module: objc[1] } : { id: `${objc[2]}.${objc[3]}` };
  return { id: raw };
}

function testingName(raw: string): string {
  const quoted = /^"(.*)"$/.exec(raw);
  return quoted ? (quoted[1] as string) : raw;
}

export const swiftTestParser: Parser = {
  name: 'swift-test',
  aliases: ['swift', 'xctest', 'swift-testing'],
  description: 'swift test console output (XCTest and Swift Testing)',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^Test Case '.+' (started|passed|failed)/m.test(text)) return 0.95;
    if (
      /^\S+ Test .+ (passed|failed) after \d/m.test(text) ||
      /^\S+ Test run (started|with \d+ tests?)/m.test(text)
    )
      return 0.9;
    if (/^Test Suite '.+' started at /m.test(text)) return 0.8;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('swift-test', { keepElements: options?.keepElements });
    const started = new Map<string, string | undefined>();
    let lineNo = 0;
    let finished = false;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trim();
        if (line.startsWith('Test Case ')) {
          const m = XCTEST.exec(line);
          if (!m) continue;
          const { id, module } = xctestId(m[1] as string);
          if (m[2] === 'started') {
            started.set(id, module);
            continue;
          }
          started.delete(id);
          const status: TestStatus = m[2] === 'passed' ? 'PASSED' : m[2] === 'failed' ? 'FAILED' : 'SKIPPED';
          const test: TestCase = { id, status, line: lineNo };
          if (module) test.module = module;
          if (m[3] !== undefined) test.durationSec = Number(m[3]);
          collector.add(test);
          continue;
        }
        if (/^(?:Test Suite 'All tests'|Test Suite '.+\.xctest') (?:passed|failed)/.test(line))
          finished = true;
        if (/^\S+ Test run (?:started|with \d+ tests?)/.test(line)) {
          if (!line.includes('started')) finished = true;
          continue;
        }
        if (/^\S+ Test run with \d+ tests?/.test(line)) {
          finished = true;
          continue;
        }
        if (!line.includes(' Test ')) continue;
        const m = SWIFT_TESTING.exec(line);
        if (!m) continue;
        const name = testingName(m[1] as string);
        const word = m[2] as string;
        if (word === 'started') {
          started.set(name, undefined);
          continue;
        }
        if (word === 'recorded an issue') continue;
        started.delete(name);
        const status: TestStatus = word === 'passed' ? 'PASSED' : word === 'failed' ? 'FAILED' : 'SKIPPED';
        const test: TestCase = { id: name, status, line: lineNo };
        if (m[3] !== undefined) test.durationSec = Number(m[3]);
        const reason = /^:\s*"?(.*?)"?\.?$/.exec(m[4] ?? '');
        if (status === 'SKIPPED' && reason?.[1]) test.message = reason[1];
        collector.add(test);
      }
    }
    for (const [id, module] of started) {
      collector.add({
        id,
        status: 'ERROR',
        message: 'started but never finished (crashed or killed)',
        ...(module ? { module } : {}),
      });
    }
    if (started.size > 0 || (!finished && collector.size > 0)) {
      collector.truncated = true;
      collector.warn(
        started.size > 0
          ? `${started.size} test(s) started without a result`
          : 'no end-of-run summary: the log looks cut short',
      );
    }
    return collector.result();
  },
};
