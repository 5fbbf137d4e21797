/**
 * mocha: the `spec` reporter's console output and the `json` reporter's report.
 *
 * Ids: mocha's own `fullTitle()`: the describe titles and the test title
 * joined by single spaces (`sum nested adds 1 + 2`), the key Multi-SWE-bench
 * reads from mocha JSON; both forms give the same ids. Spec: `✔`/`✓` passed,
 * `N) title` failed, `- title` pending (SKIPPED), describe blocks by
 * indentation; a failed hook (`"before all" hook for "x"`) is ERROR. The
 * numbered failure details after `N passing` are not results. JSON: the
 * `passes`, `failures` and `pending` arrays; a failed hook is ERROR.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import { IndentPath, indentOf, sniffJson } from './indent-path.ts';
import { type JsonScanStats, scanJson } from './json-stream.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const HOOK = /^"(?:before|after) (?:all|each)" hook/;
const DURATION = /\s+\(\d+(?:\.\d+)?\s*m?s\)$/;

async function parseSpec(
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector('mocha', { keepElements: options?.keepElements });
  const path = new IndentPath();
  let inDetails = false;
  let lineNo = 0;
  let summary: Record<string, number> = {};
  for await (const batch of readLineBatches(chunks)) {
    for (const raw of batch) {
      lineNo++;
      const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
      if (line.trim() === '') continue;
      const indent = indentOf(line);
      const body = line.slice(indent);
      const count = /^(\d+) (passing|pending|failing)(?: \(.*\))?$/.exec(body);
      if (count) {
        summary[count[2] as string] = Number(count[1]);
        inDetails = true;
        path.clear();
        continue;
      }
      // The numbered failure details after the summary are not results.
      if (inDetails) continue;
      let status: TestStatus | undefined;
      let title = body;
      if (body.startsWith('✔ ') || body.startsWith('✓ ') || body.startsWith('√ ')) {
        status = 'PASSED';
        title = body.slice(2);
      } else if (/^\d+\) /.test(body)) {
        status = 'FAILED';
        title = body.replace(/^\d+\) /, '');
      } else if (body.startsWith('- ')) {
        status = 'SKIPPED';
        title = body.slice(2);
      }
      if (status === undefined) {
        path.push(indent, body);
        continue;
      }
      title = title.replace(DURATION, '');
      if (status === 'FAILED' && HOOK.test(title)) status = 'ERROR';
      const id = [...path.ancestors(indent), title].join(' ');
      collector.add({ id, status, title, line: lineNo });
    }
  }
  const reported = (summary.passing ?? 0) + (summary.pending ?? 0) + (summary.failing ?? 0);
  if (Object.keys(summary).length === 0 && collector.size > 0) {
    collector.truncated = true;
    collector.warn('no "N passing" summary: the log looks cut short');
  } else if (reported !== collector.size && reported > 0) {
    collector.warn(`mocha's summary reports ${reported} result(s) but ${collector.size} test(s) were parsed`);
  }
  summary = {};
  return collector.result();
}

interface MochaTest {
  title?: string;
  fullTitle?: string;
  file?: string;
  duration?: number;
  err?: { message?: string };
}

async function parseJson(
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector('mocha', { keepElements: options?.keepElements });
  const stats: JsonScanStats = { outside: 0, truncated: false };
  const select = (p: readonly string[]): boolean =>
    (p.length === 2 && (p[0] === 'passes' || p[0] === 'failures' || p[0] === 'pending')) ||
    (p.length === 1 && p[0] === 'stats');
  let declared: number | undefined;
  let hooks = 0;
  for await (const record of scanJson(chunks, select, stats)) {
    if (record.path[0] === 'stats') {
      const tests = (record.value as { tests?: number }).tests;
      if (typeof tests === 'number') declared = tests;
      continue;
    }
    const t = record.value as MochaTest;
    const kind = record.path[0];
    const title = t.title ?? '';
    let status: TestStatus = kind === 'passes' ? 'PASSED' : kind === 'pending' ? 'SKIPPED' : 'FAILED';
    if (status === 'FAILED' && HOOK.test(title)) {
      status = 'ERROR';
      hooks++;
    }
    const test: TestCase = { id: t.fullTitle ?? title, status, title };
    if (t.file) test.file = t.file;
    if (typeof t.duration === 'number') test.durationSec = t.duration / 1000;
    const message = t.err?.message?.split('\n')[0];
    if (message) test.message = message;
    collector.add(test);
  }
  if (stats.error) collector.warn(stats.error);
  if (stats.truncated) {
    collector.truncated = true;
    collector.warn('the JSON report ends before its closing brace: cut short');
  }
  if (declared !== undefined && declared !== collector.size - hooks) {
    collector.warn(`stats.tests is ${declared} but ${collector.size - hooks} test result(s) were read`);
  }
  return collector.result();
}

export const mochaParser: Parser = {
  name: 'mocha',
  aliases: ['mocha-json', 'mocha-spec'],
  description: 'mocha spec reporter console output or --reporter json report',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\s*\{\s*"stats":\s*\{\s*"suites"/.test(text)) return 0.95;
    if (/^\s+\d+ passing \(\d/m.test(text)) return 0.9;
    if (/^\s+✔ /m.test(text)) return 0.4;
    return 0;
  },
  async parse(chunks, options) {
    const { json, stream } = await sniffJson(chunks, /^\{\s*\n\s*"stats":/);
    return json ? parseJson(stream, options) : parseSpec(stream, options);
  },
};
