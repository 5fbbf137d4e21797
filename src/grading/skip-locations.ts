/**
 * Maps pytest's skips reported only by location (`SKIPPED [1] tests/test_x.py:9: reason`, the
 * `-rA` summary without `-v`) back to the tests they belong to, from the test file itself: the
 * location is a line of the test function that skipped (a `pytest.skip()` call in its body) or
 * of the decorators above its `def` (`@pytest.mark.skip`). The node id is the file, the enclosing
 * classes and the function: `tests/test_x.py::TestX::test_y`.
 *
 * Only what the file proves is mapped: a location inside a function whose name does not start
 * with `test` (a helper, a fixture in conftest.py), a parametrised function (its ids carry
 * parameters the log does not give), or a location that `[N]` says stands for several tests is
 * left unnamed. A mapping never uses the log's own listing of ids, which the tested code can
 * print (a conftest.py printing a deleted test's id would otherwise make that test "skipped").
 */
import type { ParseResult, TestCase, UnnamedResults } from '../parsers/types.ts';

/** The test a 1-based `line` of a Python file belongs to: `Class::...::test_name`, or undefined. */
export function testAtLine(source: string, line: number): string | undefined {
  const lines = source.split('\n');
  if (line < 1 || line > lines.length) return undefined;
  const indentOf = (text: string) => text.length - text.trimStart().length;
  const blank = (text: string) => text.trim() === '' || text.trimStart().startsWith('#');
  // The `def` a decorator (starting on line index `k`) decorates: the next line at its indentation
  // that is not another decorator or the closing bracket of a multi-line one.
  const decorated = (k: number): number => {
    const indent = indentOf(lines[k] as string);
    for (let j = k + 1; j < lines.length; j++) {
      const text = lines[j] as string;
      if (blank(text) || indentOf(text) > indent) continue;
      if (indentOf(text) < indent) return -1;
      const t = text.trimStart();
      if (t.startsWith('@') || /^[)\]}]/.test(t)) continue;
      return /^(?:async\s+)?def\s+\w+\s*\(/.test(t) ? j : -1;
    }
    return -1;
  };
  const at = line - 1;
  // The innermost `def` the line belongs to: its own line, a body line indented deeper, or one
  // of its decorators (a decorator's argument lines included).
  let defLine = -1;
  let minIndent = Number.POSITIVE_INFINITY;
  for (let k = at; k >= 0; k--) {
    const text = lines[k] as string;
    if (blank(text) && k !== at) continue;
    const indent = indentOf(text);
    if (k !== at && indent >= minIndent) continue;
    minIndent = indent;
    const t = text.trimStart();
    if (/^(?:async\s+)?def\s+\w+\s*\(/.test(t)) {
      defLine = k;
      break;
    }
    if (t.startsWith('@')) {
      defLine = decorated(k);
      break;
    }
    // A statement at the top level that is not a def: the line is not in a function.
    if (indent === 0) return undefined;
  }
  if (defLine < 0) return undefined;
  const defIndent = indentOf(lines[defLine] as string);
  const name = /def\s+(\w+)/.exec(lines[defLine] as string)?.[1] as string;
  if (!name.startsWith('test')) return undefined;
  // The def's own decorators (the lines just above it at its indentation).
  const decorators: string[] = [];
  for (let k = defLine - 1; k >= 0; k--) {
    const text = lines[k] as string;
    if (blank(text)) continue;
    if (indentOf(text) === defIndent && text.trimStart().startsWith('@')) decorators.push(text.trim());
    else if (indentOf(text) > defIndent && decorators.length > 0)
      continue; // a decorator's continuation line
    else break;
  }
  if (decorators.some((d) => /\bparametrize\b/.test(d))) return undefined;
  // Enclosing classes, outermost first; a def nested in another def is not a test.
  const path = [name];
  let indent = defIndent;
  for (let k = defLine - 1; k >= 0 && indent > 0; k--) {
    const text = lines[k] as string;
    if (blank(text) || indentOf(text) >= indent) continue;
    indent = indentOf(text);
    const cls = /^\s*class\s+(\w+)/.exec(text);
    if (cls) path.unshift(cls[1] as string);
    else if (/^\s*(?:async\s+)?def\s/.test(text)) return undefined;
    else if (!text.trimStart().startsWith('@')) return undefined;
  }
  return path.join('::');
}

/**
 * The parse with every skip location its test file proves mapped to a SKIPPED test
 * (`mappedFrom: 'file:line'`), and what remains unnamed. `sources` gives a file's text (as the
 * log names it, relative to the test run's folder), or undefined when it cannot be read.
 */
export async function mapSkipLocations(
  parse: ParseResult,
  sources: (file: string) => Promise<string | undefined>,
): Promise<ParseResult> {
  const unnamed = parse.unnamed ?? [];
  if (!unnamed.some((u) => u.status === 'SKIPPED' && u.skips && u.skips.length > 0)) return parse;
  const known = new Set(parse.tests.map((t) => t.id));
  const tests: TestCase[] = [...parse.tests];
  const left: UnnamedResults[] = [];
  let mappedCount = 0;
  for (const u of unnamed) {
    if (u.status !== 'SKIPPED' || !u.skips) {
      left.push(u);
      continue;
    }
    const source = await sources(u.file);
    let count = u.count;
    const rest: NonNullable<UnnamedResults['skips']> = [];
    for (const skip of u.skips) {
      const test =
        source !== undefined && skip.count === 1 && count > 0 ? testAtLine(source, skip.line) : undefined;
      const id = test ? `${u.file}::${test}` : undefined;
      if (!id || known.has(id)) {
        rest.push(skip);
        continue;
      }
      known.add(id);
      tests.push({ id, status: 'SKIPPED', message: skip.reason, mappedFrom: `${u.file}:${skip.line}` });
      count--;
      mappedCount++;
    }
    if (count > 0)
      left.push({
        ...u,
        count,
        locations: rest.map((s) => `${u.file}:${s.line}`),
        skips: rest,
      });
  }
  if (mappedCount === 0) return parse;
  const warnings = [
    ...parse.warnings,
    `${mappedCount} skip(s) reported only by location were mapped to their tests from the test files`,
  ];
  return { ...parse, tests, ...(left.length > 0 ? { unnamed: left } : { unnamed: [] }), warnings };
}
