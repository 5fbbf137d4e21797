/**
 * `cargo test` / libtest console output (the default "pretty" format).
 *
 * Ids: the test path as libtest prints it (`tests::nested::deep_test`, an
 * integration test `adds`, a doc test `src/lib.rs - add (line 3)`); the
 * ` - should panic` marker is dropped. The same path in two test binaries
 * (unit and integration) is one id, merged by precedence, with the binary in
 * `binary`. `ok` -> PASSED, `FAILED` -> FAILED, `ignored` -> SKIPPED (SWE-bench
 * drops ignored tests; a missing test counts as failed there either way).
 * A binary that printed `running N tests` but no `test result:` line is a
 * truncated log (a crash or a timeout); a compile error is a warning.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const TEST_LINE = /^test (.+?) \.\.\. ?(ok|FAILED|ignored(?:, (.*))?|bench:.*)?$/;
const RUNNING = /^\s*Running (.+?)(?: \((.+)\))?$/;
const DOC_TESTS = /^\s*Doc-tests (\S+)/;
const RESULT = /^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/;

function toStatus(word: string): TestStatus {
  if (word === 'ok' || word.startsWith('bench')) return 'PASSED';
  if (word === 'FAILED') return 'FAILED';
  return 'SKIPPED';
}

export const cargoParser: Parser = {
  name: 'cargo',
  aliases: ['cargo-test', 'libtest', 'rust'],
  description: 'cargo test / libtest console output (unit, integration and doc tests)',

  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^test result: (ok|FAILED)\. \d+ passed;/m.test(text)) return 0.95;
    if (/^running \d+ tests?$/m.test(text) && /^test \S+ \.\.\. (ok|FAILED|ignored)/m.test(text)) return 0.9;
    return 0;
  },

  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('cargo', { keepElements: options?.keepElements });
    let binary: string | undefined;
    let open = false;
    let pending: string | undefined;
    let lineNo = 0;
    let compileErrors = 0;
    let expected: { passed: number; failed: number; ignored: number } | undefined;
    let seen = { passed: 0, failed: 0, ignored: 0 };

    const record = (name: string, word: string, reason: string | undefined): void => {
      const id = name.replace(/ - should panic(?: with .*)?$/, '');
      const status = toStatus(word);
      const test: TestCase = { id, status, line: lineNo };
      if (binary) test.binary = binary;
      if (reason) test.message = reason;
      if (status === 'PASSED') seen.passed++;
      else if (status === 'FAILED') seen.failed++;
      else seen.ignored++;
      collector.add(test);
    };

    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = raw.includes('\u001b') ? stripAnsi(raw) : raw;
        if (line.startsWith('test ')) {
          const m = TEST_LINE.exec(line);
          if (m) {
            if (m[2] === undefined) pending = m[1];
            else record(m[1] as string, m[2].startsWith('ignored') ? 'ignored' : m[2], m[3]);
            continue;
          }
          const result = RESULT.exec(line);
          if (result) {
            expected = { passed: Number(result[2]), failed: Number(result[3]), ignored: Number(result[4]) };
            if (
              expected.passed !== seen.passed ||
              expected.failed !== seen.failed ||
              expected.ignored !== seen.ignored
            ) {
              collector.warn(
                `${binary ?? 'a test binary'}: libtest reports ${expected.passed} passed, ${expected.failed} failed, ${expected.ignored} ignored but ${seen.passed}/${seen.failed}/${seen.ignored} test lines were read`,
              );
            }
            open = false;
            pending = undefined;
            continue;
          }
        }
        // `--nocapture`: the status lands on a later line of its own.
        if (pending !== undefined && /^(ok|FAILED|ignored)$/.test(line.trim())) {
          record(pending, line.trim(), undefined);
          pending = undefined;
          continue;
        }
        const running = RUNNING.exec(line);
        if (running && /^(unittests |tests\/|benches\/|examples\/|src\/)/.test(running[1] as string)) {
          binary = running[1];
          continue;
        }
        const doc = DOC_TESTS.exec(line);
        if (doc) {
          binary = `Doc-tests ${doc[1]}`;
          continue;
        }
        if (/^running \d+ tests?$/.test(line)) {
          if (open) {
            collector.truncated = true;
            collector.warn(`${binary ?? 'a test binary'} ended without a "test result:" line`);
          }
          open = true;
          seen = { passed: 0, failed: 0, ignored: 0 };
          continue;
        }
        if (
          /^error(\[E\d+\])?: /.test(line) &&
          !/^error: test failed|^error: doctest failed|^error: \d+ targets? failed/.test(line)
        ) {
          compileErrors++;
          if (compileErrors === 1) collector.warn(`line ${lineNo}: ${line.slice(0, 200)}`);
        }
      }
    }
    if (open) {
      collector.truncated = true;
      collector.warn(
        `${binary ?? 'a test binary'} ended without a "test result:" line: the log looks cut short`,
      );
    }
    if (compileErrors > 0)
      collector.warn(`${compileErrors} compiler error line(s): some tests may not have been built`);
    return collector.result();
  },
};
