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
 * #167). Output without a final newline runs into the outcome (`... partial outputok`,
 * `... some outputFAIL`): such a glued outcome settles the test unless a line that is only
 * an outcome follows before the next test (then that line does). A test left without any
 * outcome is named in a warning. Not reproduced: SWE-bench's special cases for single
 * instances (`--version is equivalent to version`, django__django-7188's migration line).
 *
 * The runner's `Ran N tests` total is checked against the tests that had an outcome line:
 * a difference is a warning and `countMismatch`.
 */
import { detach, readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

/** An outcome at the end of a ` ... ` line, or alone on a line. */
function outcomeOf(
  text: string,
): { status: TestStatus; outcome?: string; message?: string; glued?: boolean } | undefined {
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

/** An outcome that output without a newline ran into: `...partial outputok`, `...outputFAIL`. */
function gluedOutcomeOf(text: string): ReturnType<typeof outcomeOf> {
  const t = text.trimEnd();
  if (t.endsWith('ok') || t.endsWith('OK')) return { status: 'PASSED' };
  if (t.endsWith('FAIL')) return { status: 'FAILED' };
  if (t.endsWith('ERROR')) return { status: 'ERROR' };
  if (t.endsWith('unexpected success')) return { status: 'FAILED', outcome: 'xpassed' };
  if (t.endsWith('expected failure')) return { status: 'PASSED', outcome: 'xfailed' };
  const skip = /skipped(?: (['"].*['"]))?$/.exec(t);
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
    type Outcome = NonNullable<ReturnType<typeof outcomeOf>>;
    // A test whose ` ... ` line had no outcome yet; `glued`: the outcome its output ran into.
    let pending: { id: string; line: number; glued?: Outcome } | undefined;
    let ran: number | undefined;
    let ranLine = '';
    // Tests that had an outcome line (what `Ran N tests` counts; subtest headers add ids it does not).
    const withOutcome = new Set<string>();
    const noOutcome: string[] = [];
    const record = (id: string, line: number, result: Outcome) => {
      const test: TestCase = { id, status: result.status, line };
      if (result.outcome) test.outcome = result.outcome;
      if (result.message) test.message = result.message;
      if (result.glued) test.glued = true;
      collector.merge(test);
      if (withOutcome.size < 1_000_000) withOutcome.add(detach(id));
    };
    /** The next test (or the end) came: the pending test keeps its glued outcome, or has none. */
    const settle = () => {
      if (!pending) return;
      if (pending.glued) record(pending.id, pending.line, { ...pending.glued, glued: true });
      else if (noOutcome.length < 20) noOutcome.push(`${JSON.stringify(pending.id)} (line ${pending.line})`);
      else noOutcome.push('');
      pending = undefined;
    };
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trim();
        const sep = line.indexOf(' ... ');
        if (sep > 0) {
          settle();
          const id = line.slice(0, sep).trim();
          const tail = line.slice(sep + 5);
          const result = outcomeOf(tail);
          if (result) record(id, lineNo, result);
          else {
            const glued = gluedOutcomeOf(tail);
            pending = { id, line: lineNo, ...(glued ? { glued } : {}) };
          }
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
          settle();
          collector.merge({
            id: (header[2] as string).trim(),
            status: header[1] === 'FAIL' ? 'FAILED' : 'ERROR',
            line: lineNo,
          });
          continue;
        }
        const summary = /^Ran (\d+) tests? in /.exec(line);
        if (summary) {
          settle();
          ran = (ran ?? 0) + Number(summary[1]);
          ranLine = line;
        }
      }
    }
    settle();
    if (noOutcome.length > 0) {
      const named = noOutcome.filter(Boolean);
      collector.warn(
        `no outcome for ${noOutcome.length} test(s): ${named.join(', ')}${named.length < noOutcome.length ? ', ...' : ''}`,
      );
    }
    if (ran === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no "Ran N tests" summary: the log looks cut short');
    }
    const result = collector.result();
    if (ran !== undefined && ran !== withOutcome.size) {
      result.countMismatch = { reported: ran, parsed: withOutcome.size, summary: ranLine };
      result.warnings.push(
        `the runner reports "${ranLine}" (${ran}) but ${withOutcome.size} test(s) with an outcome were parsed`,
      );
    }
    return result;
  },
};
