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
import { addCount, detach, readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus, UnnamedResults } from './types.ts';

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
export function verboseTail(line: string): { index: number; word: Word; reason?: string } | undefined {
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
      if (before) return { ...before, reason: line.slice(open + 2, end - 1) };
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

/**
 * SWE-bench's `parse_log_pytest_options` rule (its parser for pydicom, requests
 * and pylint): in `name[option]`, an option that is an absolute path (starts
 * with `/`, not `//`, holds no `*`) keeps only its last segment, so a
 * parameter holding the run's temp folder names the same test every run:
 * `test_stdin[/tmp/tmpab12/mymodule.py]` -> `test_stdin[/mymodule.py]`.
 * Returns the id unchanged when the rule does not apply.
 */
export function shortenPathParameter(id: string): string {
  const open = id.indexOf('[');
  const close = id.lastIndexOf(']');
  if (open < 0 || close < open) return id;
  const option = id.slice(open + 1, close);
  if (!option.startsWith('/') || option.startsWith('//') || option.includes('*')) return id;
  return `${id.slice(0, open)}[/${option.slice(option.lastIndexOf('/') + 1)}]`;
}

/** A node id as pytest prints it: a path, optionally `::` parts. */
function looksLikeNodeId(id: string): boolean {
  return id.includes('::') || /\.py$/.test(id);
}

/**
 * Where in pytest's output a line stands. Results are taken only where pytest
 * prints results: before any section header (a log that is only `-rA` lines),
 * in the session's progress / `-v` part, and in the short test summary. Never
 * from FAILURES / ERRORS / PASSES / warnings or any other section, which hold
 * tracebacks and the tests' captured output (a test that prints `PASSED x` does
 * not make a result), and never after the session's final summary line.
 */
type Area = 'open' | 'session' | 'summary' | 'details' | 'after';

// `===== FAILURES =====`, `===== short test summary info =====`...
const SECTION = /^=+ (.+?) =+$/;
// `----- Captured stdout call -----`, `----- Captured log setup -----`.
const CAPTURED = /^-+ Captured .* -+$/;
// `___ test_name ___`: one test's block inside a details section.
const TEST_BLOCK = /^_{3,} .+ _{3,}$/;
// `SKIPPED [2] tests/test_x.py:9: reason`: skipped tests by location, not by id.
const SKIP_SUMMARY = /^\[(\d+)\]\s+(.+?):(\d+): ?(.*)$/;
// pytest < 8 prints an xfail's reason on the line after `XFAIL <id>`.
const REASON_LINE = /^\s+reason: (.*)$/;

interface Buffered {
  id: string;
  word: Word;
  message: string | undefined;
  line: number;
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
    let area: Area = 'open';
    let captured = false;
    let sessionStarted = false;
    let sawSummarySection = false;
    let finalSummary: string | undefined;
    // The last `-v` id printed without its status (the test's own output came in between).
    let pendingId: string | undefined;
    let classicFile: string | undefined;
    // Classic progress characters, counted per file and status (no ids are printed).
    const anonymous = new Map<string, Map<Word, number>>();
    // The short test summary's results, committed when the session ends: a later summary
    // section of the same session replaces an earlier one (captured output imitating one).
    let summary: Buffered[] = [];
    let lastXfail: Buffered | undefined;
    // Ids an xfail(run=False) test has: a later plain XFAIL line of the same test stays not-run.
    const notRun = new Set<string>();
    // `SKIPPED [N] file:line: reason` lines.
    const skipSummaries: SkipSummary[] = [];
    // Results printed before any session header: kept only if no pytest session starts after them
    // (a log of `-rA` lines alone); before a session they are output of a plugin or conftest.py.
    let beforeSession: Buffered[] = [];
    let lineNo = 0;

    const record = (id: string, word: Word, message: string | undefined, line: number): void => {
      if (area === 'open' && !sessionStarted) {
        if (beforeSession.length < 1_000_000) beforeSession.push({ id: detach(id), word, message, line });
        return;
      }
      let { status, outcome } = toStatus(word, message);
      if (outcome === 'xfailed-notrun') notRun.add(id);
      else if (word === 'XFAIL' && notRun.has(id)) ({ status, outcome } = XFAIL_NOTRUN);
      // A repeat that changes nothing (the -rA line of a test its -v line already gave) allocates nothing.
      const previous = collector.get(id);
      const overrides = outcome === 'xfailed-notrun' && previous?.outcome === 'xfailed';
      if (!overrides && !collector.changes(id, status, message !== undefined)) return;
      const test: TestCase = { id, status, line };
      if (outcome) test.outcome = outcome;
      if (message) test.message = message;
      // An xfail that never ran is not a pass, whichever line said so first.
      if (overrides) collector.set(test);
      else collector.merge(test);
    };

    const commitSummary = (): void => {
      for (const r of summary) record(r.id, r.word, r.message, r.line);
      summary = [];
      lastXfail = undefined;
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

    /** A `=== title ===` line: moves to the area it opens. */
    const section = (title: string): void => {
      classicFile = undefined;
      pendingId = undefined;
      captured = false;
      if (title === 'test session starts') {
        if (beforeSession.length > 0) {
          collector.warn(
            `${beforeSession.length} result line(s) printed before pytest's session started were ignored (output of a plugin or conftest.py, not results; first: line ${beforeSession[0]?.line})`,
          );
          beforeSession = [];
        }
        commitSummary();
        area = 'session';
        sessionStarted = true;
        finalSummary = undefined;
        return;
      }
      if (title === 'short test summary info') {
        if (summary.length > 0)
          collector.warn(
            'a second "short test summary info" section in one pytest session: the earlier one was discarded (test output imitating pytest?)',
          );
        summary = [];
        lastXfail = undefined;
        sawSummarySection = true;
        area = 'summary';
        return;
      }
      const m = FINAL_SUMMARY.exec(`= ${title} =`);
      if (m) {
        finalSummary = m[1];
        area = 'after';
        return;
      }
      area = 'details';
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
        const m = SECTION.exec(line);
        if (m) section((m[1] as string).trim());
        else classicFile = undefined;
        return;
      }
      if (area === 'details' || area === 'after') return;
      if (first === 45 /* - */ && CAPTURED.test(line)) {
        captured = true;
        return;
      }
      if (first === 95 /* _ */ && TEST_BLOCK.test(line)) {
        captured = false;
        return;
      }
      if (captured) return;
      if (lastXfail !== undefined) {
        const reason = REASON_LINE.exec(line);
        const xfail = lastXfail;
        lastXfail = undefined;
        if (reason) {
          xfail.message = detach(reason[1] as string);
          return;
        }
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
            if (pendingId !== undefined && area !== 'summary') record(pendingId, word, undefined, lineNo);
            pendingId = undefined;
            return;
          }
          // `SKIPPED [1] tests/test_a.py:12: reason` is a skip summary, not a test id.
          if (word === 'SKIPPED' && /^\[\d+\]\s/.test(rest)) {
            const skip = SKIP_SUMMARY.exec(rest);
            if (skip)
              skipSummaries.push({
                count: Number(skip[1]),
                file: detach(skip[2] as string),
                line: Number(skip[3]),
                location: detach(`${skip[2]}:${skip[3]}`),
                reason: detach(skip[4] as string),
              });
            return;
          }
          const { id, message } = splitIdAndMessage(rest);
          if (id.length === 0) return;
          if (area === 'summary') {
            const entry: Buffered = { id: detach(id), word, message, line: lineNo };
            summary.push(entry);
            lastXfail = word === 'XFAIL' ? entry : undefined;
          } else record(id, word, message, lineNo);
          return;
        }
      }
      // The short summary holds status-first lines only.
      if (area === 'summary') return;

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
          record(id, tail.word, tail.reason, lineNo);
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
    commitSummary();
    if (!sessionStarted) {
      // No session header at all: the log is results alone (`-rA` lines), and these are they.
      area = 'session';
      for (const r of beforeSession) record(r.id, r.word, r.message, r.line);
    }

    const unnamed = settleUnnamed(collector, anonymous, skipSummaries, sawSummarySection);
    if (sessionStarted && finalSummary === undefined) {
      collector.truncated = true;
      collector.warn('no final pytest summary line (`=== N passed in Xs ===`): the log looks cut short');
    }
    const result = collector.result();
    if (unnamed.length > 0) {
      result.unnamed = unnamed;
      for (const u of unnamed) addCount(result.counts, u.status, u.count);
    }
    if (finalSummary !== undefined) checkSummary(result, finalSummary);
    return result;
  },
};

interface SkipSummary {
  count: number;
  file: string;
  /** 1-based line. */
  line: number;
  location: string;
  reason: string;
}

const fileOf = (id: string): string => id.split('::')[0] as string;

/**
 * Results the log gives without an id. Classic progress lines print one
 * character per test; `-rA` names every result but skips, which it groups by
 * location (`SKIPPED [2] tests/test_x.py:9: reason`). No id is ever invented:
 * they stay counted and unnamed, a skipped result with the skip summaries
 * located in its file (`skips`), so that a caller holding the test file can
 * map a location back to its test (src/grading/skip-locations.ts). What cannot
 * be named is said in a warning.
 */
function settleUnnamed(
  collector: TestCollector,
  anonymous: Map<string, Map<Word, number>>,
  skips: SkipSummary[],
  sawSummarySection: boolean,
): UnnamedResults[] {
  // Named results per file and classic word.
  const named = new Map<string, number>();
  for (const test of collector.tests()) {
    const file = fileOf(test.id);
    const outcome = typeof test.outcome === 'string' ? test.outcome : '';
    const word = outcome.startsWith('xfailed') ? 'XFAIL' : outcome === 'xpassed' ? 'XPASS' : test.status;
    const key = `${file}\u0000${word}`;
    named.set(key, (named.get(key) ?? 0) + 1);
  }
  const unnamed: UnnamedResults[] = [];
  const skipsByFile = new Map<string, SkipSummary[]>();
  for (const s of skips) {
    const list = skipsByFile.get(s.file) ?? [];
    list.push(s);
    skipsByFile.set(s.file, list);
  }
  const add = (file: string, status: TestStatus, count: number) => {
    if (count <= 0) return;
    const here = status === 'SKIPPED' ? (skipsByFile.get(file) ?? []) : [];
    unnamed.push({
      file,
      status,
      count,
      ...(here.length > 0
        ? {
            locations: here.map((s) => s.location),
            skips: here.map(({ line, count: n, reason }) => ({ line, count: n, reason })),
          }
        : {}),
    });
  };
  // Skips: from the progress characters of a file when it printed any, else from the skip summaries.
  const skipCount = new Map<string, number>();
  for (const [file, perFile] of anonymous) {
    for (const [word, count] of perFile) {
      const left = count - (named.get(`${file}\u0000${word}`) ?? 0);
      if (word === 'SKIPPED') skipCount.set(file, left);
      else add(file, toStatus(word, undefined).status, left);
    }
  }
  if (anonymous.size === 0) {
    // No progress characters (-v): every skip the summaries count beyond the named ones is unnamed,
    // attributed to the files the summaries locate them in.
    let excess = skips.reduce((n, s) => n + s.count, 0);
    for (const [key, n] of named) if (key.endsWith('\u0000SKIPPED')) excess -= n;
    for (const [file, list] of skipsByFile) {
      if (excess <= 0) break;
      const here = list.reduce((n, s) => n + s.count, 0) - (named.get(`${file}\u0000SKIPPED`) ?? 0);
      const take = Math.min(here, excess);
      if (take > 0) skipCount.set(file, take);
      excess -= Math.max(0, take);
    }
  }
  const unmapped: string[] = [];
  for (const [file, count] of skipCount) {
    if (count <= 0) continue;
    add(file, 'SKIPPED', count);
    const locations = (skipsByFile.get(file) ?? []).map((s) => s.location);
    unmapped.push(`${count} in ${file}${locations.length > 0 ? ` (${locations.join(', ')})` : ''}`);
  }
  const others = unnamed.filter((u) => u.status !== 'SKIPPED');
  if (others.length > 0) {
    const n = others.reduce((k, u) => k + u.count, 0);
    collector.warn(
      `${n} result(s) from classic progress lines (\`${others[0]?.file} ..F\`) carry no test id: counted, not named; ` +
        `tests they stand for count as missing (run pytest with ${sawSummarySection ? '-v' : '-rA or -v'} to name them)`,
    );
  }
  if (unmapped.length > 0) {
    collector.warn(
      `skipped tests reported only by location, not by test id: ${unmapped.join('; ')}; ` +
        'tests they stand for count as missing unless the test file maps each location to its test (run pytest with -v to name skipped tests)',
    );
  }
  return unnamed;
}

/** Compares the final `N passed, M failed` line with what was parsed. */
function checkSummary(result: ParseResult, summary: string): void {
  let reported = 0;
  for (const m of summary.matchAll(/(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b/g)) {
    reported += Number(m[1]);
  }
  const parsed = result.tests.length + (result.unnamed ?? []).reduce((n, u) => n + u.count, 0);
  if (reported !== parsed) {
    result.countMismatch = { reported, parsed, summary };
    result.warnings.push(
      `pytest's summary reports ${reported} result(s) (${summary}) but ${parsed} test(s) were parsed`,
    );
  }
}
