/**
 * pytest console output: `-rA` short test summary lines (`PASSED <id>`,
 * `FAILED <id> - message`), `-v` lines (`<id> PASSED [ 50%]`), pytest-xdist
 * lines (`[gw0] [ 20%] PASSED <id>`), classic progress lines
 * (`tests/test_a.py ..F`), with or without colour.
 *
 * Ids are pytest node ids exactly as pytest prints them and as SWE-bench
 * writes them in FAIL_TO_PASS (`tests/test_a.py::TestX::test_y[param with spaces]`).
 *
 * Status mapping (SWE-bench's: `test_passed` accepts PASSED and XFAIL):
 * PASSED -> PASSED; FAILED -> FAILED; ERROR -> ERROR; SKIPPED -> SKIPPED;
 * XFAIL -> PASSED with `outcome: 'xfailed'`, except `XFAIL <id> - [NOTRUN]`
 * (an `xfail(run=False)` test that never ran, SWE-bench issue #654) -> SKIPPED;
 * XPASS -> PASSED with `outcome: 'xpassed'` (a strict xpass is printed as FAILED by pytest).
 * A test reported several times (a `-v` line and an `-rA` line, or a call and a
 * teardown error) is merged by ERROR > FAILED > PASSED > SKIPPED.
 */
import { detach, readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

type Word = 'PASSED' | 'FAILED' | 'ERROR' | 'SKIPPED' | 'XFAIL' | 'XPASS';

const WORDS = 'PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS';
// `[gw3] [ 20%] ` / `[gw3] [1/5] ` / `[gw3] ` prefixes of pytest-xdist.
const XDIST = /^\[gw\d+\]\s+(?:\[\s*\d+%\]\s+|\[\s*\d+\/\d+\]\s+)?/;
const STATUS_FIRST = new RegExp(`^(${WORDS})(?:\\s+(.*))?$`);
// `<id> STATUS`, optionally `(reason)` and a `[ 50%]` / `[3/5]` progress column.
const PENDING_ID = /^\S+\.py::\S/;
const WORD_LIST: readonly Word[] = ['PASSED', 'FAILED', 'ERROR', 'SKIPPED', 'XFAIL', 'XPASS'];
const PROGRESS_COLUMN = /^\[\s*\d+(?:%|\/\d+)\]$/;

/**
 * `<id> STATUS`, optionally ` (reason)` and a `[ 50%]` / `[3/5]` progress column:
 * where the status word starts, read from the end of the line (no regex scan
 * over the id, which may itself contain status words inside its parameters).
 */
export function verboseTail(line: string): { index: number; word: Word } | undefined {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) <= 32) end--;
  if (line.charCodeAt(end - 1) === 93 /* ] */) {
    const open = line.lastIndexOf('[', end - 1);
    if (open > 0 && PROGRESS_COLUMN.test(line.slice(open, end))) {
      end = open;
      while (end > 0 && line.charCodeAt(end - 1) <= 32) end--;
    }
  }
  const found = wordEndingAt(line, end);
  if (found) return found;
  // `SKIPPED (reason)`: the reason's parentheses end the line.
  if (line.charCodeAt(end - 1) === 41 /* ) */) {
    for (let open = line.lastIndexOf(' (', end); open > 0; open = line.lastIndexOf(' (', open - 1)) {
      const before = wordEndingAt(line, open);
      if (before) return before;
    }
  }
  return undefined;
}

function wordEndingAt(line: string, end: number): { index: number; word: Word } | undefined {
  for (const word of WORD_LIST) {
    const start = end - word.length;
    if (start > 0 && line.startsWith(word, start)) {
      const c = line.charCodeAt(start - 1);
      if (c === 32 || c === 9) return { index: start - 1, word };
    }
  }
  return undefined;
}
// Classic progress: `tests/test_a.py ..F.s   [ 66%]`.
const CLASSIC = /^(\S+\.py) ([.FEsxX]+)\s*(?:\[\s*\d+%\])?\s*$/;
const CLASSIC_CONT = /^([.FEsxX]+)\s*(?:\[\s*\d+%\])?\s*$/;
const PROGRESS_ONLY = /^\[\s*\d+(?:%|\/\d+)\]$/;
const SESSION_START = /^=+ test session starts =+$/;
// `==== 1 failed, 12 passed, 1 skipped in 0.45s ====`, `==== no tests ran in 0.01s ====`.
const FINAL_SUMMARY =
  /^=+ (.*\b(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|no tests ran)\b.*) in [\d.]+s(?: \([^)]*\))? =+$/;
// Leftovers of colour codes whose ESC byte was lost (`[32m`), and other control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point.
const REMNANTS = /\[\d+(?:;\d+)*m|[\u0000-\u0008\u000b-\u001f\u007f]/g;
const REMNANT_START = /^\[\d+(?:;\d+)*m/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point.
const CONTROL_ALL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

const CLASSIC_STATUS: Record<string, Word> = {
  '.': 'PASSED',
  F: 'FAILED',
  E: 'ERROR',
  s: 'SKIPPED',
  x: 'XFAIL',
  X: 'XPASS',
};

/**
 * Cuts `id - message` at the first ` - ` outside square brackets, so a
 * parameter containing ` - ` stays in the id (`test_x[a - b] - AssertionError`).
 */
export function splitIdAndMessage(rest: string): { id: string; message?: string } {
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c === 91 /* [ */) depth++;
    else if (c === 93 /* ] */) depth = Math.max(0, depth - 1);
    else if (c === 32 && depth === 0 && rest.charCodeAt(i + 1) === 45 && rest.charCodeAt(i + 2) === 32) {
      return { id: rest.slice(0, i).trimEnd(), message: rest.slice(i + 3).trim() };
    }
  }
  return { id: rest.trim() };
}

const STATUS_OF: Record<Word, { status: TestStatus; outcome?: string }> = {
  PASSED: { status: 'PASSED' },
  FAILED: { status: 'FAILED' },
  ERROR: { status: 'ERROR' },
  SKIPPED: { status: 'SKIPPED' },
  XFAIL: { status: 'PASSED', outcome: 'xfailed' },
  XPASS: { status: 'PASSED', outcome: 'xpassed' },
};
const XFAIL_NOTRUN = { status: 'SKIPPED', outcome: 'xfailed-notrun' } as const;

function toStatus(word: Word, message: string | undefined): { status: TestStatus; outcome?: string } {
  if (word === 'XFAIL' && message?.includes('[NOTRUN]')) return XFAIL_NOTRUN;
  return STATUS_OF[word];
}

/** A node id as pytest prints it: a path, optionally `::` parts. */
function looksLikeNodeId(id: string): boolean {
  return id.includes('::') || /\.py$/.test(id);
}

export const pytestParser: Parser = {
  name: 'pytest',
  aliases: ['pytest-console', 'py.test'],
  description: 'pytest console output (-rA summary, -v, classic progress, xdist, colour)',

  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^=+ test session starts =+$/m.test(text)) return 0.95;
    if (/^=+ short test summary info =+$/m.test(text)) return 0.9;
    if (/^(?:\[gw\d+\] .*)?(?:PASSED|FAILED|ERROR) \S+\.py::\S/m.test(text)) return 0.7;
    if (/^\S+\.py::\S.* (?:PASSED|FAILED|ERROR|SKIPPED)(?:\s+\[\s*\d+%\])?\s*$/m.test(text)) return 0.7;
    return 0;
  },

  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('pytest', { keepElements: options?.keepElements });
    let sessionStarted = false;
    let finalSummary: string | undefined;
    // The last `-v` id printed without its status (the test's own output came in between).
    let pendingId: string | undefined;
    let classicFile: string | undefined;
    // Classic progress characters, counted per file and status (no ids are printed).
    const anonymous = new Map<string, Map<Word, number>>();
    let lineNo = 0;

    const record = (id: string, word: Word, message: string | undefined, line: number): void => {
      const { status, outcome } = toStatus(word, message);
      // A repeat that changes nothing (the -rA line of a test its -v line already gave) allocates nothing.
      if (!collector.changes(id, status, message !== undefined)) return;
      const test: TestCase = { id, status, line };
      if (outcome) test.outcome = outcome;
      if (message) test.message = message;
      collector.merge(test);
    };

    const countClassic = (file: string, marks: string): void => {
      let perFile = anonymous.get(file);
      if (!perFile) {
        perFile = new Map();
        anonymous.set(detach(file), perFile);
      }
      for (const ch of marks) {
        const word = CLASSIC_STATUS[ch] as Word;
        perFile.set(word, (perFile.get(word) ?? 0) + 1);
      }
    };

    const handle = (raw: string): void => {
      lineNo++;
      let line = raw;
      if (line.includes('\u001b')) line = stripAnsi(line);
      // Colour codes whose ESC byte was lost (`[32mPASSED[0m`): only when a line starts with one,
      // so a parameter like `test_x[1m]` is left alone.
      const first0 = line.charCodeAt(0);
      if (first0 === 91 /* [ */ && REMNANT_START.test(line)) line = line.replace(REMNANTS, '');
      else if (line.charCodeAt(0) < 32 && CONTROL.test(line)) line = line.replace(CONTROL_ALL, '');
      const lastCode = line.charCodeAt(line.length - 1);
      if (lastCode === 32 || lastCode === 9) line = line.trimEnd();
      if (line.length === 0) {
        classicFile = undefined;
        return;
      }
      const first = line.charCodeAt(0);
      if (first === 61 /* = */) {
        classicFile = undefined;
        if (SESSION_START.test(line)) sessionStarted = true;
        else {
          const m = FINAL_SUMMARY.exec(line);
          if (m) finalSummary = m[1];
        }
        return;
      }
      let lead = first;
      if (first === 91 /* [ */ && line.startsWith('[gw')) {
        line = line.replace(XDIST, '');
        lead = line.charCodeAt(0);
      }

      // P F E S X: a status word first (`-rA` summary, xdist).
      if (lead === 80 || lead === 70 || lead === 69 || lead === 83 || lead === 88) {
        if (CONTROL.test(line)) line = line.replace(CONTROL_ALL, '');
        const sf = STATUS_FIRST.exec(line);
        if (sf) {
          const word = sf[1] as Word;
          const rest = sf[2]?.trim() ?? '';
          if (rest === '' || PROGRESS_ONLY.test(rest)) {
            // A bare status (optionally with its progress column): it belongs to the
            // last `-v` id printed without a status (pytest -s output in between).
            if (pendingId !== undefined) record(pendingId, word, undefined, lineNo);
            pendingId = undefined;
            return;
          }
          // `SKIPPED [1] tests/test_a.py:12: reason` is a skip summary, not a test id.
          if (word === 'SKIPPED' && /^\[\d+\]\s/.test(rest)) return;
          const { id, message } = splitIdAndMessage(rest);
          if (id.length > 0) record(id, word, message, lineNo);
          return;
        }
      }

      if (!line.includes('.py')) {
        if (classicFile !== undefined && CLASSIC_CONT.test(line)) {
          countClassic(classicFile, line.trim().split(/\s/)[0] as string);
          pendingId = undefined;
          return;
        }
        classicFile = undefined;
        return;
      }

      // Other control characters (a stray `\b`, `\x0f`) only matter on lines that can hold a result.
      if (CONTROL.test(line)) line = line.replace(CONTROL_ALL, '');
      // `<id> STATUS [ 50%]` (-v).
      const tail = verboseTail(line);
      if (tail) {
        const id = line.slice(0, tail.index).trim();
        if (looksLikeNodeId(id)) {
          record(id, tail.word, undefined, lineNo);
          pendingId = undefined;
          classicFile = undefined;
          return;
        }
      }

      const cl = CLASSIC.exec(line);
      if (cl) {
        classicFile = cl[1] as string;
        countClassic(classicFile, cl[2] as string);
        pendingId = undefined;
        return;
      }
      classicFile = undefined;

      // `path::test_name ` printed by -v before the test's own output.
      if (PENDING_ID.test(line) && !line.includes(' - ')) pendingId = line.trim();
    };

    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) handle(raw);
    }

    settleAnonymous(collector, anonymous);
    if (sessionStarted && finalSummary === undefined) {
      collector.truncated = true;
      collector.warn('no final pytest summary line (`=== N passed in Xs ===`): the log looks cut short');
    }
    if (finalSummary !== undefined) checkSummary(collector, finalSummary);
    return collector.result();
  },
};

/**
 * Classic progress lines print one character per test and no ids. Results the
 * log also names (an `-rA` or short-summary line for the same file and status)
 * use those; the rest become `<file>::#<k>` placeholders so counts stay right.
 */
function settleAnonymous(collector: TestCollector, anonymous: Map<string, Map<Word, number>>): void {
  if (anonymous.size === 0) return;
  const named = new Map<string, number>();
  for (const test of collector.tests()) {
    const file = test.id.split('::')[0] as string;
    if (!anonymous.has(file)) continue;
    const word = test.outcome === 'xfailed' ? 'XFAIL' : test.outcome === 'xpassed' ? 'XPASS' : test.status;
    const key = `${file}\u0000${word}`;
    named.set(key, (named.get(key) ?? 0) + 1);
  }
  let placeholders = 0;
  for (const [file, perFile] of anonymous) {
    let k = 0;
    for (const [word, count] of perFile) {
      const left = count - (named.get(`${file}\u0000${word}`) ?? 0);
      for (let i = 0; i < left; i++) {
        k++;
        const { status, outcome } = toStatus(word, undefined);
        const test: TestCase = { id: `${file}::#${k}`, status, anonymous: true };
        if (outcome) test.outcome = outcome;
        collector.merge(test);
        placeholders++;
      }
    }
  }
  if (placeholders > 0) {
    collector.warn(
      `${placeholders} result(s) from classic progress lines carry no test id and are recorded as <file>::#k; run pytest with -rA or -v for node ids`,
    );
  }
}

/** Compares the final `N passed, M failed` line with what was parsed. */
function checkSummary(collector: TestCollector, summary: string): void {
  let reported = 0;
  for (const m of summary.matchAll(/(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b/g)) {
    reported += Number(m[1]);
  }
  const parsed = collector.size;
  if (reported !== parsed) {
    collector.warn(
      `pytest's summary reports ${reported} result(s) (${summary}) but ${parsed} test(s) were parsed`,
    );
  }
}
