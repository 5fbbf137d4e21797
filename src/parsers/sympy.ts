/**
 * sympy's own runner (`bin/test -C --verbose`), as SWE-bench's `parse_log_sympy` reads it.
 *
 * Under a file header (`sympy/matrices/tests/test_sparse.py[11]`) each test prints its name,
 * then (after anything it prints itself, or a skip reason) one mark: `ok` -> PASSED, `F` ->
 * FAILED, `E` -> ERROR, `T` (timed out) -> ERROR, `f` (expected failure) -> PASSED with outcome
 * `xfailed`, `X` (unexpected pass) -> PASSED with outcome `xpassed`, `s`, `w` (slow), `K`
 * (interrupted) -> SKIPPED. Ids are the bare function names, as SWE-bench writes them in
 * FAIL_TO_PASS (`test_sparse_matrix`); the file is kept in `file`. Two files with a test of the
 * same name share one id (merged ERROR > FAILED > PASSED > SKIPPED). The details of a failure or
 * an exception are headed `___ sympy/x/tests/test_a.py:test_name ___` (`::` for failures in
 * newer sympy); that id, as printed, is recorded FAILED too, as SWE-bench does. A test that
 * prints output gets its mark at the start of a later line (`test_x some output` then `ok`);
 * it is settled by that line (SWE-bench's parser misses it).
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const MARKS: Record<string, { status: TestStatus; outcome?: string }> = {
  ok: { status: 'PASSED' },
  F: { status: 'FAILED' },
  E: { status: 'ERROR' },
  f: { status: 'PASSED', outcome: 'xfailed' },
  X: { status: 'PASSED', outcome: 'xpassed' },
  T: { status: 'ERROR', outcome: 'timeout' },
  s: { status: 'SKIPPED' },
  w: { status: 'SKIPPED', outcome: 'slow' },
  K: { status: 'SKIPPED', outcome: 'interrupted' },
};

export const sympyParser: Parser = {
  name: 'sympy',
  aliases: ['sympy-bin-test'],
  description: "sympy's bin/test --verbose output (`test_name ok`)",
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^=+ test process starts =+$/m.test(text) && /^test_\w+ (?:ok|F|E)\s*$/m.test(text)) return 0.95;
    if (/^=+ test process starts =+$/m.test(text)) return 0.7;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('sympy', { keepElements: options?.keepElements });
    let lineNo = 0;
    let file: string | undefined;
    let finished = false;
    // A test whose own output came between its name and its mark (the mark then starts a line).
    let pending: { id: string; line: number; file?: string } | undefined;
    const record = (id: string, markText: string, line: number, inFile: string | undefined) => {
      const mark = MARKS[markText] as { status: TestStatus; outcome?: string };
      const test: TestCase = { id, status: mark.status, line };
      if (mark.outcome) test.outcome = mark.outcome;
      if (inFile) test.file = inFile;
      collector.merge(test);
    };
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        // The file's `[OK]` / `[FAIL]`, right-aligned after its last test.
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw)
          .trim()
          .replace(/\s+\[(?:OK|FAIL)\]$/, '');
        const header = /^(\S+\.py)\[\d+\]/.exec(line);
        if (header) {
          file = header[1];
          continue;
        }
        const result = /^(test_\S*)(?:\s.*)?\s(ok|F|E|T|f|X|s|w|K)$/.exec(line);
        if (result) {
          record(result[1] as string, result[2] as string, lineNo, file);
          pending = undefined;
          continue;
        }
        if (pending && /^(?:ok|F|E|T|f|X|s|w|K)$/.test(line)) {
          record(pending.id, line, pending.line, pending.file);
          pending = undefined;
          continue;
        }
        const started = /^(test_\S*)(?:\s|$)/.exec(line);
        if (started) {
          pending = { id: started[1] as string, line: lineNo, ...(file ? { file } : {}) };
          continue;
        }
        const details = /^_+ (\S+\.py::?\S+) _+$/.exec(line);
        if (details) {
          collector.merge({ id: details[1] as string, status: 'FAILED', line: lineNo });
          continue;
        }
        if (/^=*\s*tests finished: /.test(line)) finished = true;
      }
    }
    if (!finished && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no "tests finished" summary: the log looks cut short');
    }
    return collector.result();
  },
};
