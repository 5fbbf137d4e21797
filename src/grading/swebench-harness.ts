/**
 * The SWE-bench harness's reading of a parsed log, for `--rules swebench`: its log parsers fill
 * a dict, so when a test id appears several times the last line wins (`log_parsers/*.py`), where
 * berth's own parsers keep the worst status (ERROR > FAILED > PASSED > SKIPPED). A test printed
 * FAILED by the runner and PASSED by a line written after it passes for the harness.
 */
import type { ParseResult, TestCase } from '../parsers/types.ts';

/**
 * The parse as the harness reads it: every id with the status of its last occurrence. Needs the
 * parse made with `keepElements`; without elements it is returned unchanged.
 */
export function lastLineWins(parse: ParseResult): ParseResult {
  if (!parse.elements) return parse;
  const last = new Map<string, TestCase>();
  for (const element of parse.elements) {
    last.delete(element.id);
    last.set(element.id, element);
  }
  const tests = parse.tests.map((t) => {
    const l = last.get(t.id);
    return l && l.status !== t.status ? { ...t, status: l.status } : t;
  });
  return { ...parse, tests };
}
