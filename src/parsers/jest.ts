/**
 * jest and vitest: verbose console output and `--json` reports.
 *
 * jest ids: the describe blocks and the test title joined by ` > `
 * (`sum > nested > adds 1 + 2`), the form SWE-bench's jest JSON transform
 * prints; the file is kept in `file`. Text: `PASS|FAIL <file>` headers,
 * `✓`/`√` passed, `✕`/`×` failed, `○ skipped` / `✎ todo` skipped, describe
 * blocks by indentation, `(N ms)` dropped (SWE-bench PR #616). JSON
 * (`jest --json`): `ancestorTitles` + `title`; status passed/failed, and
 * pending/skipped/todo/disabled -> SKIPPED.
 *
 * vitest ids: the verbose line as vitest prints it without the duration:
 * `<file> > describe > test` (SWE-bench's vitest parser, vuejs/core). `✓`
 * passed, `×` failed, `↓` skipped/todo. JSON (`vitest --reporter=json`, jest's
 * shape): `ancestors > title` like jest's JSON, with the (absolute) file in
 * `file`: the JSON gives no project root to make it relative, so a grader
 * comparing with text-form ids prefixes the relative file itself.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import { IndentPath, indentOf, sniffJson } from './indent-path.ts';
import { type JsonScanStats, scanJson } from './json-stream.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const DURATION = /\s+\((?:\d+(?:\.\d+)?\s*m?s)\)$/;
const JEST_FILE = /^(PASS|FAIL)\s+(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?$/;

function jsonStatus(status: string): TestStatus {
  if (status === 'passed') return 'PASSED';
  if (status === 'failed') return 'FAILED';
  return 'SKIPPED';
}

interface AssertionResult {
  ancestorTitles?: string[];
  title?: string;
  fullName?: string;
  status?: string;
  failureMessages?: string[];
  duration?: number | null;
}

/** jest/vitest `--json`: every `testResults[].assertionResults[]`, plus suites that failed to run. */
async function parseJestJson(
  format: string,
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector(format, { keepElements: options?.keepElements });
  const stats: JsonScanStats = { outside: 0, truncated: false };
  const totals: Record<string, number> = {};
  // One `testResults[]` entry: its tests arrive before its name, so they wait for it.
  interface FileEntry {
    tests: TestCase[];
    name?: string;
    status?: string;
    message?: string;
  }
  let current: FileEntry = { tests: [] };
  const finish = (): void => {
    const { name, status, message } = current;
    if (current.tests.length === 0 && status === 'failed' && name) {
      // A suite that failed before any test ran (a syntax error, a failing import).
      const first = message?.split('\n').find((l) => l.trim());
      collector.add({ id: name, status: 'ERROR', file: name, ...(first ? { message: first } : {}) });
    }
    for (const test of current.tests) {
      if (name) test.file = name;
      collector.add(test);
    }
    current = { tests: [] };
  };
  const fieldSeen = (): boolean =>
    current.name !== undefined || current.status !== undefined || current.message !== undefined;
  const select = (path: readonly string[]): boolean =>
    (path.length === 4 && path[0] === 'testResults' && path[2] === 'assertionResults') ||
    (path.length === 3 &&
      path[0] === 'testResults' &&
      (path[2] === 'name' || path[2] === 'status' || path[2] === 'message')) ||
    (path.length === 1 && path[0]?.startsWith('num') === true);
  for await (const record of scanJson(chunks, select, stats)) {
    const path = record.path;
    if (path.length === 1) {
      totals[path[0] as string] = Number(record.value);
      continue;
    }
    if (path.length === 3) {
      const field = path[2] as 'name' | 'status' | 'message';
      if (current[field] !== undefined) finish();
      current[field] = record.value === null ? '' : String(record.value);
      continue;
    }
    if (fieldSeen()) finish();
    const a = record.value as AssertionResult;
    const title = a.title ?? a.fullName ?? '';
    const id = [...(a.ancestorTitles ?? []), title].join(' > ');
    const test: TestCase = { id, status: jsonStatus(a.status ?? ''), title };
    if (a.status && a.status !== 'passed' && a.status !== 'failed') test.outcome = a.status;
    const message = a.failureMessages?.[0]?.split('\n').find((l) => l.trim());
    if (message) test.message = message;
    if (typeof a.duration === 'number') test.durationSec = a.duration / 1000;
    current.tests.push(test);
  }
  finish();
  if (stats.error) collector.warn(stats.error);
  if (stats.truncated) {
    collector.truncated = true;
    collector.warn('the JSON report ends before its closing brace: cut short');
  }
  const total = totals.numTotalTests;
  if (total !== undefined && total !== collector.size) {
    collector.warn(`the report's numTotalTests is ${total} but ${collector.size} distinct test(s) were read`);
  }
  return collector.result();
}

async function parseJestText(
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector('jest', { keepElements: options?.keepElements });
  const path = new IndentPath();
  let file: string | undefined;
  let inDetails = false;
  let lineNo = 0;
  for await (const batch of readLineBatches(chunks)) {
    for (const raw of batch) {
      lineNo++;
      const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
      const header = JEST_FILE.exec(line);
      if (header) {
        file = header[2];
        path.clear();
        inDetails = false;
        continue;
      }
      if (line.trim() === '') continue;
      const indent = indentOf(line);
      const body = line.slice(indent);
      // `● describe › test` failure details follow the tree until the next file.
      if (body.startsWith('● ')) {
        inDetails = true;
        continue;
      }
      if (inDetails || file === undefined) continue;
      const symbol = body.charAt(0);
      let status: TestStatus | undefined;
      let title = body.slice(2);
      if (symbol === '✓' || symbol === '√') status = 'PASSED';
      else if (symbol === '✕' || symbol === '×') status = 'FAILED';
      else if (symbol === '○') {
        status = 'SKIPPED';
        title = title.replace(/^skipped /, '');
      } else if (symbol === '✎') {
        status = 'SKIPPED';
        title = title.replace(/^todo /, '');
      }
      if (status === undefined) {
        // A describe block name (or unrelated output, which the next suite replaces).
        if (/^(Test Suites|Tests|Snapshots|Time|Ran all test suites):?/.test(body)) continue;
        path.push(indent, body);
        continue;
      }
      title = title.replace(DURATION, '');
      const id = [...path.ancestors(indent), title].join(' > ');
      const test: TestCase = { id, status, file, title, line: lineNo };
      if (symbol === '✎') test.outcome = 'todo';
      collector.add(test);
    }
  }
  return collector.result();
}

async function parseVitestText(
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector('vitest', { keepElements: options?.keepElements });
  let lineNo = 0;
  for await (const batch of readLineBatches(chunks)) {
    for (const raw of batch) {
      lineNo++;
      const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trim();
      const symbol = line.charAt(0);
      let status: TestStatus | undefined;
      if (symbol === '✓' || symbol === '√' || symbol === '✔') status = 'PASSED';
      else if (symbol === '×' || symbol === '✗' || symbol === '✕') status = 'FAILED';
      else if (symbol === '↓') status = 'SKIPPED';
      if (status === undefined || line.charAt(1) !== ' ') continue;
      let name = line.slice(2).trim();
      // ` 12ms`, ` 1.2s`, ` [skipped]`, and vitest 3's `(3 tests) 4ms` on file lines.
      name = name.replace(/\s+(?:\d+(?:\.\d+)?\s*m?s|\[skipped\])$/, '');
      const fileLine = /^(.+?) \(\d+ tests?(?: \| \d+ \w+)*\)$/.exec(name);
      if (fileLine) continue;
      if (!name.includes(' > ')) continue;
      const file = name.slice(0, name.indexOf(' > '));
      collector.add({ id: name, status, file, line: lineNo });
    }
  }
  return collector.result();
}

export const jestParser: Parser = {
  name: 'jest',
  aliases: ['jest-json'],
  description: 'jest --verbose console output or jest --json report',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\s*\{\s*"numFailedTestSuites"/.test(text)) return 0.9;
    if (/^(PASS|FAIL) \S/m.test(text) && /^\s+[✓✕○✎√×] /m.test(text)) return 0.9;
    if (/^Test Suites: .*total$/m.test(text)) return 0.6;
    return 0;
  },
  async parse(chunks, options) {
    const { json, stream } = await sniffJson(chunks, /^\{"num\w+TestSuites"/);
    return json ? parseJestJson('jest', stream, options) : parseJestText(stream, options);
  },
};

export const vitestParser: Parser = {
  name: 'vitest',
  aliases: ['vitest-json'],
  description: 'vitest --reporter=verbose console output or --reporter=json report',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\s*\{\s*"numTotalTestSuites"/.test(text)) return 0.9;
    if (/^\s*RUN\s+v\d+\.\d+/m.test(text)) return 0.9;
    if (/^\s*[✓×↓] \S+\.(?:test|spec)\.[cm]?[jt]sx? > /m.test(text)) return 0.8;
    return 0;
  },
  async parse(chunks, options) {
    const { json, stream } = await sniffJson(chunks, /^\{"num\w+TestSuites"/);
    return json ? parseJestJson('vitest', stream, options) : parseVitestText(stream, options);
  },
};
