/**
 * RSpec: `--format documentation` console output and `--format json` reports.
 *
 * Ids: RSpec's `full_description`: the example group descriptions and the
 * example's joined by single spaces (`Calc#add with negative numbers adds
 * them`); both forms give the same ids. RSpec itself joins `#method` and
 * `.method` groups without a space (`Calc#add`), and so does this parser.
 * Documentation: a plain example line is PASSED, `(FAILED - N)` FAILED,
 * `(PENDING: reason)` SKIPPED. JSON: `examples[].status` passed / failed /
 * pending. "An error occurred while loading" (a file that failed to load) is a
 * warning and an ERROR result for that file.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import { IndentPath, indentOf, sniffJson } from './indent-path.ts';
import { type JsonScanStats, scanJson } from './json-stream.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

/** RSpec's description join: no space before `#method`, `.method` or `::Const`. */
export function joinDescriptions(parts: readonly string[]): string {
  let out = '';
  for (const part of parts) {
    if (out === '') out = part;
    else if (/^(#|\.|::)/.test(part)) out += part;
    else out += ` ${part}`;
  }
  return out;
}

async function parseDocumentation(
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector('rspec', { keepElements: options?.keepElements });
  const path = new IndentPath();
  let lineNo = 0;
  let inTree = true;
  let previous: { indent: number; body: string; line: number } | undefined;
  let summary: string | undefined;
  // A line is a group if the next non-blank line is indented deeper; an example otherwise.
  const settle = (next: { indent: number } | undefined): void => {
    if (!previous) return;
    const { indent, body, line } = previous;
    previous = undefined;
    if (next && next.indent > indent) {
      path.push(indent, body);
      return;
    }
    let status: TestStatus = 'PASSED';
    let description = body;
    let message: string | undefined;
    const failed = /^(.*) \(FAILED - \d+\)$/.exec(body);
    const pending = /^(.*) \(PENDING: (.*)\)$/.exec(body);
    if (failed) {
      status = 'FAILED';
      description = failed[1] as string;
    } else if (pending) {
      status = 'SKIPPED';
      description = pending[1] as string;
      message = pending[2];
    }
    const test: TestCase = { id: joinDescriptions([...path.ancestors(indent), description]), status, line };
    if (message) test.message = message;
    collector.add(test);
  };
  for await (const batch of readLineBatches(chunks)) {
    for (const raw of batch) {
      lineNo++;
      const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
      if (line.trim() === '') continue;
      if (/^(Pending|Failures|Failed examples): ?/.test(line) || /^Finished in /.test(line)) {
        settle(undefined);
        inTree = false;
        path.clear();
        continue;
      }
      if (/^\d+ examples?, \d+ failures?/.test(line)) {
        settle(undefined);
        summary = line;
        inTree = false;
        continue;
      }
      const loadError = /^An error occurred while loading (.+?)\.?$/.exec(line);
      if (loadError) {
        settle(undefined);
        collector.add({
          id: loadError[1] as string,
          status: 'ERROR',
          line: lineNo,
          message: 'error while loading',
        });
        collector.warn(`line ${lineNo}: ${line}`);
        continue;
      }
      if (!inTree) {
        // A new run's tree starts again at column 0 after a blank line.
        if (/^\S/.test(line) && !/^(rspec |Randomized with seed|Run options:)/.test(line)) {
          inTree = true;
          path.clear();
        } else continue;
      }
      const indent = indentOf(line);
      settle({ indent });
      previous = { indent, body: line.slice(indent), line: lineNo };
    }
  }
  settle(undefined);
  if (summary === undefined && collector.size > 0) {
    collector.truncated = true;
    collector.warn('no "N examples, M failures" summary: the log looks cut short');
  } else if (summary) {
    const total = Number(/^(\d+)/.exec(summary)?.[1]);
    if (total !== collector.size)
      collector.warn(`RSpec reports ${summary} but ${collector.size} example(s) were parsed`);
  }
  return collector.result();
}

interface Example {
  id?: string;
  description?: string;
  full_description?: string;
  status?: string;
  file_path?: string;
  line_number?: number;
  run_time?: number;
  pending_message?: string | null;
  exception?: { class?: string; message?: string };
}

async function parseJson(
  chunks: AsyncIterable<string | Uint8Array>,
  options?: ParseOptions,
): Promise<ParseResult> {
  const collector = new TestCollector('rspec', { keepElements: options?.keepElements });
  const stats: JsonScanStats = { outside: 0, truncated: false };
  const select = (p: readonly string[]): boolean =>
    (p.length === 2 && p[0] === 'examples') || (p.length === 1 && p[0] === 'summary');
  let declared: { example_count?: number; errors_outside_of_examples_count?: number } | undefined;
  for await (const record of scanJson(chunks, select, stats)) {
    if (record.path[0] === 'summary') {
      declared = record.value as typeof declared;
      continue;
    }
    const e = record.value as Example;
    const status: TestStatus =
      e.status === 'passed' ? 'PASSED' : e.status === 'failed' ? 'FAILED' : 'SKIPPED';
    const test: TestCase = { id: e.full_description ?? e.description ?? e.id ?? '', status };
    if (e.id) test.exampleId = e.id;
    if (e.file_path) test.file = e.file_path;
    if (typeof e.run_time === 'number') test.durationSec = e.run_time;
    const message = e.exception?.message?.split('\n').find((l) => l.trim()) ?? e.pending_message ?? undefined;
    if (message) test.message = message;
    collector.add(test);
  }
  if (stats.error) collector.warn(stats.error);
  if (stats.truncated) {
    collector.truncated = true;
    collector.warn('the JSON report ends before its closing brace: cut short');
  }
  if (declared?.errors_outside_of_examples_count) {
    collector.warn(
      `${declared.errors_outside_of_examples_count} error(s) outside of examples (a file failed to load)`,
    );
  }
  if (declared?.example_count !== undefined && declared.example_count !== collector.size) {
    collector.warn(
      `summary.example_count is ${declared.example_count} but ${collector.size} distinct example(s) were read`,
    );
  }
  return collector.result();
}

export const rspecParser: Parser = {
  name: 'rspec',
  aliases: ['rspec-json', 'rspec-documentation'],
  description: 'RSpec --format documentation console output or --format json report',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^\s*\{\s*"version":\s*"\d[^"]*",\s*"(?:seed|examples|messages)"/.test(text)) return 0.95;
    if (/^\d+ examples?, \d+ failures?/m.test(text)) return 0.9;
    if (/\((?:FAILED - \d+|PENDING: .*)\)$/m.test(text)) return 0.6;
    return 0;
  },
  async parse(chunks, options) {
    const { json, stream } = await sniffJson(chunks, /^\{"version":/);
    return json ? parseJson(stream, options) : parseDocumentation(stream, options);
  },
};
