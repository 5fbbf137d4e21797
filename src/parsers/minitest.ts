/**
 * Ruby minitest (`-v`) and test-unit (`-v`) console output.
 *
 * minitest ids: `Class#test_name`, as minitest prints them
 * (`CalcTest#test_adds = 0.00 s = .`): `.` PASSED, `F` FAILED, `E` ERROR,
 * `S` SKIPPED.
 *
 * test-unit ids: `Class#name` where name is the method (`test_adds`) or, for a
 * `test "description"` block, `test: description` as test-unit prints it; the
 * class is the indented header line (`TestCalc:`). `.` PASSED, `F` FAILED,
 * `E` ERROR, `O` omitted and `P` pending SKIPPED, `N` notification PASSED.
 * SWE-bench's `parse_log_ruby_unit` keys on the bare name; `name` holds it.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestStatus } from './types.ts';

const MARKS: Record<string, TestStatus> = {
  '.': 'PASSED',
  F: 'FAILED',
  E: 'ERROR',
  S: 'SKIPPED',
  O: 'SKIPPED',
  P: 'SKIPPED',
  N: 'PASSED',
};

export const minitestParser: Parser = {
  name: 'minitest',
  aliases: ['ruby-minitest'],
  description: 'Ruby minitest -v console output',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\S+#\S+ = \d+\.\d+ s = [.FES]$/m.test(text)) return 0.95;
    if (/^# Running:$/m.test(text)) return 0.6;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('minitest', { keepElements: options?.keepElements });
    let lineNo = 0;
    let summary: string | undefined;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        // `Class#test_x = 0.00 s = .`; output printed by the test can precede the ` = ` part on the same line.
        const m = /^(.*?)(\S+#\S.*?) = (\d+(?:\.\d+)?) s = ([.FES])$/.exec(line);
        if (m) {
          collector.add({
            id: m[2] as string,
            status: MARKS[m[4] as string] as TestStatus,
            durationSec: Number(m[3]),
            line: lineNo,
          });
          continue;
        }
        if (/^\d+ runs, \d+ assertions, \d+ failures, \d+ errors, \d+ skips/.test(line)) summary = line;
      }
    }
    if (summary === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no "N runs, ..." summary: the log looks cut short');
    } else if (summary) {
      const runs = Number(/^(\d+)/.exec(summary)?.[1]);
      if (runs !== collector.size)
        collector.warn(`minitest reports ${runs} run(s) but ${collector.size} test(s) were parsed`);
    }
    return collector.result();
  },
};

export const testUnitParser: Parser = {
  name: 'test-unit',
  aliases: ['ruby-test-unit', 'testunit'],
  description: 'Ruby test-unit -v console output',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^Loaded suite /m.test(text) && /^Started$/m.test(text)) return 0.9;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('test-unit', { keepElements: options?.keepElements });
    let lineNo = 0;
    let suite: string | undefined;
    let summary: string | undefined;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        const header = /^(\s*)([A-Z][\w:]*): ?$/.exec(line);
        if (header) {
          suite = header[2];
          continue;
        }
        // `  test_adds:\t\t\t.: (0.000036)` or `  test_errors:\t\t\tE` (details follow).
        const m = /^\s+(.+?):\s+([.FEOPN])(?::\s*\(\d+(?:\.\d+)?\))?$/.exec(line);
        if (m && suite !== undefined) {
          const name = m[1] as string;
          collector.add({
            id: `${suite}#${name}`,
            status: MARKS[m[2] as string] as TestStatus,
            name,
            line: lineNo,
          });
          continue;
        }
        if (/^\d+ tests, \d+ assertions, \d+ failures, \d+ errors/.test(line)) summary = line;
      }
    }
    if (summary === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no "N tests, ..." summary: the log looks cut short');
    } else if (summary) {
      const runs = Number(/^(\d+)/.exec(summary)?.[1]);
      if (runs !== collector.size)
        collector.warn(`test-unit reports ${runs} test(s) but ${collector.size} were parsed`);
    }
    return collector.result();
  },
};
