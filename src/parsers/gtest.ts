/**
 * GoogleTest console output (a test binary, or `ctest -V` / `--output-on-failure`
 * around it) and ctest's own per-test lines.
 *
 * googletest ids: `Suite.Test` as GoogleTest prints it, parameterised and typed
 * forms included (`Evens/ParamTest.IsEven/1`, `TypedTest/0.ZeroIsZero`); the
 * `, where GetParam() = 3` suffix is dropped (kept in `param`). `[       OK ]`
 * PASSED, `[  FAILED  ]` FAILED, `[  SKIPPED ]` SKIPPED; the end-of-run
 * listing (`[  FAILED  ] X` without a time) is not a result. A test that
 * started (`[ RUN      ]`) and never finished is ERROR (the binary crashed)
 * and the log is flagged truncated. ctest -V prefixes (`1: `) are removed.
 *
 * ctest ids: the test name (`1/5 Test #1: calc_test ....   Passed`): `Passed`
 * PASSED; `***Failed`, `***Timeout` FAILED; `***Exception: ...` and
 * `***Not Run` ERROR; `***Skipped`, `Not Run (Disabled)` SKIPPED.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const GTEST = /^\[\s*(RUN|OK|FAILED|SKIPPED)\s*\] (.+?)(?: \((\d+) ms\))?$/;
const CTEST =
  /^\s*\d+\/\d+ Test\s+#\d+: (.+?) \.+\s*(?:\*{3})?(Passed|Failed|Timeout|Exception: .*?|Not Run(?: \(Disabled\))?|Skipped|\*+Failed.*?)\s+[\d.]+ sec$/;

export const googletestParser: Parser = {
  name: 'googletest',
  aliases: ['gtest'],
  description: 'GoogleTest console output (also inside ctest -V)',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^(?:\d+: )?\[ RUN {6}\] /m.test(text)) return 0.95;
    if (/^(?:\d+: )?\[=+\] Running \d+ tests?/m.test(text)) return 0.9;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('googletest', { keepElements: options?.keepElements });
    const running = new Set<string>();
    let lineNo = 0;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        let line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        if (line.charCodeAt(0) !== 91 /* [ */) {
          const prefixed = /^\d+: (\[.*)$/.exec(line);
          if (!prefixed) continue;
          line = prefixed[1] as string;
        }
        const m = GTEST.exec(line);
        if (!m) continue;
        const word = m[1] as string;
        let name = m[2] as string;
        let param: string | undefined;
        const where = /^(.+?), where (.+)$/.exec(name);
        if (where) {
          name = where[1] as string;
          param = where[2];
        }
        if (word === 'RUN') {
          running.add(name);
          continue;
        }
        // The closing listing repeats names without a duration: not a new result.
        if (m[3] === undefined) continue;
        running.delete(name);
        const status: TestStatus = word === 'OK' ? 'PASSED' : word === 'FAILED' ? 'FAILED' : 'SKIPPED';
        const test: TestCase = { id: name, status, durationSec: Number(m[3]) / 1000, line: lineNo };
        if (param) test.param = param;
        collector.add(test);
      }
    }
    for (const name of running) {
      collector.add({
        id: name,
        status: 'ERROR',
        message: 'started but never finished (the test binary crashed or was killed)',
      });
    }
    if (running.size > 0) {
      collector.truncated = true;
      collector.warn(
        `${running.size} test(s) started without a result: ${[...running].slice(0, 5).join(', ')}`,
      );
    }
    return collector.result();
  },
};

export const ctestParser: Parser = {
  name: 'ctest',
  aliases: ['cmake-ctest'],
  description: 'CTest console output (one result per registered test)',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\s*\d+\/\d+ Test\s+#\d+: /m.test(text)) return /\[ RUN {6}\]/.test(text) ? 0.7 : 0.95;
    if (/^Test project /m.test(text)) return 0.6;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('ctest', { keepElements: options?.keepElements });
    let lineNo = 0;
    let summary: string | undefined;
    let started = 0;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        if (/^\s*Start\s+\d+: /.test(line)) {
          started++;
          continue;
        }
        const m = CTEST.exec(line);
        if (m) {
          const word = m[2] as string;
          let status: TestStatus = 'FAILED';
          if (word === 'Passed') status = 'PASSED';
          else if (word === 'Skipped' || word === 'Not Run (Disabled)') status = 'SKIPPED';
          else if (word.startsWith('Exception') || word === 'Not Run') status = 'ERROR';
          const test: TestCase = { id: m[1] as string, status, line: lineNo };
          if (status !== 'PASSED') test.message = word;
          collector.add(test);
          continue;
        }
        if (/^\d+% tests passed, \d+ tests? failed out of \d+/.test(line)) summary = line;
      }
    }
    if (summary === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no "N% tests passed" summary: the log looks cut short');
    }
    if (started > collector.size) {
      collector.warn(`${started} test(s) started but ${collector.size} result(s) were read`);
    }
    return collector.result();
  },
};
