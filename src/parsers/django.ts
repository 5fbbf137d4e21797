/**
 * Django's test runner (`./tests/runtests.py --verbosity 2`) and Python unittest verbose output:
 * one `<test> ... <outcome>` line per test, as SWE-bench's `parse_log_django` reads it.
 *
 * Ids are the text before ` ... `, trimmed, exactly as SWE-bench writes them in FAIL_TO_PASS:
 * `test_x (app.tests.FooTests)` on older Django, `test_x (app.tests.FooTests.test_x)` on newer,
 * or the first docstring line when the test has one (Django prints the name on one line and
 * `Docstring line. ... ok` on the next; the docstring line is the id, SWE-bench issue #275).
 *
 * Outcomes: `ok`/`OK` -> PASSED; `skipped ...` -> SKIPPED; `FAIL` -> FAILED; `ERROR` -> ERROR;
 * `expected failure` -> PASSED (outcome `xfailed`, as pytest's XFAIL); `unexpected success`
 * -> FAILED (unittest counts it against the run). A `FAIL: <test>` / `ERROR: <test>` header of
 * the failure details marks that test FAILED / ERROR.
 *
 * Output printed between ` ... ` and the outcome (a test's own prints, `System check
 * identified no issues (0 silenced).`, `Internal Server Error: /x/`) leaves the test pending;
 * the next line that is only an outcome (`ok`, `FAIL`, ...) settles it (SWE-bench issues #165,
 * #167). Not reproduced: SWE-bench's special cases for single instances (`--version is
 * equivalent to version`, django__django-7188's migration line).
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

/** An outcome at the end of a ` ... ` line, or alone on a line. */
function outcomeOf(text: string): { status: TestStatus; outcome?: string; message?: string } | undefined {
  const t = text.trim();
  if (t === 'ok' || t === 'OK') return { status: 'PASSED' };
  if (t === 'FAIL') return { status: 'FAILED' };
  if (t === 'ERROR') return { status: 'ERROR' };
  if (t === 'expected failure') return { status: 'PASSED', outcome: 'xfailed' };
  if (t === 'unexpected success') return { status: 'FAILED', outcome: 'xpassed' };
  const skip = /^skipped(?:\s+(.*))?$/.exec(t);
  if (skip) return { status: 'SKIPPED', ...(skip[1] ? { message: skip[1] } : {}) };
  return undefined;
}

export const djangoParser: Parser = {
  name: 'django',
  aliases: ['django-runtests', 'unittest', 'python-unittest'],
  description: "Django's runtests.py / Python unittest verbose output (`test (module.Class) ... ok`)",
  detect(head: string): number {
    const text = stripAnsi(head);
    const lines = /^\S.* \.\.\. (?:ok|FAIL|ERROR|skipped.*)$/m.test(text);
    if (lines && /^Testing against Django installed in /m.test(text)) return 0.95;
    if (lines && /^test\w* \([\w.]+\) \.\.\. /m.test(text)) return 0.85;
    if (lines && /^Ran \d+ tests? in /m.test(text)) return 0.8;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('django', { keepElements: options?.keepElements });
    let lineNo = 0;
    let pending: { id: string; line: number } | undefined;
    let ran: number | undefined;
    const record = (id: string, line: number, result: NonNullable<ReturnType<typeof outcomeOf>>) => {
      const test: TestCase = { id, status: result.status, line };
      if (result.outcome) test.outcome = result.outcome;
      if (result.message) test.message = result.message;
      collector.merge(test);
    };
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trim();
        const sep = line.indexOf(' ... ');
        if (sep > 0) {
          const id = line.slice(0, sep).trim();
          const result = outcomeOf(line.slice(sep + 5));
          if (result) {
            record(id, lineNo, result);
            pending = undefined;
          } else pending = { id, line: lineNo };
          continue;
        }
        if (pending) {
          const result = outcomeOf(line);
          if (result) {
            record(pending.id, pending.line, result);
            pending = undefined;
            continue;
          }
        }
        const header = /^(FAIL|ERROR): (.+)$/.exec(line);
        if (header) {
          collector.merge({
            id: (header[2] as string).trim(),
            status: header[1] === 'FAIL' ? 'FAILED' : 'ERROR',
            line: lineNo,
          });
          continue;
        }
        const summary = /^Ran (\d+) tests? in /.exec(line);
        if (summary) ran = (ran ?? 0) + Number(summary[1]);
      }
    }
    if (pending) collector.warn(`no outcome for ${JSON.stringify(pending.id)} (line ${pending.line})`);
    if (ran === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no "Ran N tests" summary: the log looks cut short');
    }
    return collector.result();
  },
};
