/**
 * The SWE-bench harness's reading of a test log, for `--rules swebench`:
 *
 * - pytest logs are read as its `parse_log_pytest` reads them (`harnessPytestStatuses`: any line
 *   that starts with a status word, wherever it stands, a later line winning), where berth's own
 *   pytest parser takes no result from captured output or after pytest's final line;
 * - other logs: berth's parse, except that a test id seen several times takes the status of its
 *   last line (the harness's parsers fill a dict), where berth keeps the worst status
 *   (ERROR > FAILED > PASSED > SKIPPED); Django/unittest logs lose the outcomes glued to a
 *   test's output (`... partial outputok`), which `parse_log_django` does not read.
 *
 * A test printed FAILED by the runner and PASSED by a line written after it passes for the harness.
 */
import type { ParseResult, TestCase } from '../parsers/types.ts';
import { harnessPytestStatuses } from './swebench.ts';

/**
 * The parse as the harness reads it.
 * @param parse berth's parse, made with `keepElements` (without elements, ids keep berth's status).
 * @param log the text the parse came from.
 */
export function harnessReading(parse: ParseResult, log: string): ParseResult {
  if (parse.format === 'pytest') {
    const tests: TestCase[] = [...harnessPytestStatuses(log)].map(([id, status]) => ({ id, status }));
    return { ...parse, tests, elements: tests };
  }
  if (!parse.elements) return parse;
  // parse_log_django reads an outcome only at the end of a ` ... ` line (` ... ok`): one that a
  // test's output ran into (`... partial outputok`, berth's `glued`) is not read.
  const elements =
    parse.format === 'django' ? parse.elements.filter((e) => e.glued !== true) : parse.elements;
  const last = new Map<string, TestCase>();
  for (const element of elements) last.set(element.id, element);
  const tests = parse.tests.flatMap((t) => {
    const l = last.get(t.id);
    if (!l) return elements === parse.elements ? [t] : [];
    return l.status !== t.status ? [{ ...t, status: l.status }] : [t];
  });
  return { ...parse, tests };
}
