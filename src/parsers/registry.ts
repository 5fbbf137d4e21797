/**
 * The parser registry: find a parser by name or alias, detect one from the
 * first bytes of a report, and `parseReport`, which also handles what every
 * format shares: the run's nonce markers (output between them is used, the
 * whole log is the recorded fallback), ANSI colour codes, and a runner exit
 * code that contradicts the parsed results.
 */
import { createReadStream } from 'node:fs';
import { InputError, UsageError } from '../errors.ts';
import { chunksOf, readLines, stripAnsi } from './common.ts';
import { type GzipState, maybeGunzip } from './gzip.ts';
import { parsers } from './index.ts';
import type { ParseResult, Parser } from './types.ts';

/** Bytes of the input the detectors look at. */
export const DETECT_HEAD_BYTES = 64 * 1024;

/** Lowest `detect` score that counts as a match. */
export const DETECT_MIN_SCORE = 0.3;

function normalise(name: string): string {
  return name.trim().toLowerCase().replace(/_/g, '-');
}

/**
 * Parser names other tools write in `log_parser`, mapped to berth's registry names
 * (SWE-rebench's `install_config.log_parser`, harbor-format §8.3).
 */
const FOREIGN_NAMES: Record<string, string> = {
  parse_log_pytest: 'pytest',
  parse_log_pytest_v2: 'pytest',
  parse_log_pytest_options: 'pytest',
  parse_log_go_test: 'go-test',
  parse_log_gotest: 'go-test',
  parse_log_tap: 'tap',
  parse_log_node_test: 'tap',
  parse_log_jest: 'jest',
  parse_log_mocha: 'mocha',
  parse_log_junit: 'junit',
  parse_log_cargo: 'cargo',
  parse_log_phpunit: 'phpunit',
  parse_log_rspec: 'rspec',
};

/**
 * The parser named `name`: a registry name or alias (case-insensitive, `_` and `-` equal), or a
 * parser name another tool writes (SWE-rebench's `parse_log_pytest`...). The one look-up every
 * caller uses; `list` replaces the registry (tests, other graders).
 */
export function findParser(name: string, list: readonly Parser[] = parsers): Parser | undefined {
  const wanted = normalise(FOREIGN_NAMES[name.trim()] ?? name);
  return list.find(
    (parser) =>
      normalise(parser.name) === wanted ||
      (parser.aliases ?? []).some((alias) => normalise(alias) === wanted),
  );
}

/** Names of every parser of `list` (default: the registry), for messages. */
export function parserNames(list: readonly Parser[] = parsers): string[] {
  return list.map((p) => p.name);
}

/** Every registered parser, in registration order. */
export function listParsers(): readonly Parser[] {
  return parsers;
}

/**
 * The parser registered under `name` or one of its aliases (case-insensitive,
 * `_` and `-` equal). Throws `UsageError` naming every known format when none matches.
 */
export function getParser(name: string): Parser {
  const found = findParser(name);
  if (found) return found;
  throw new UsageError(`unknown report format "${name}"; known formats: ${knownFormats()}`);
}

/** The parser names (aliases are listed by `berth parse --list`). */
function knownFormats(): string {
  return `${parsers.map((p) => p.name).join(', ')} (aliases: \`berth parse --list\`)`;
}

/**
 * The parser whose `detect` scores `head` (the first 64 KiB of the input, as
 * text) highest, or `undefined` when no parser scores at least 0.3 (`minScore`: more
 * than that score). Ties go to the parser registered first. `list` replaces the registry.
 */
export function detectParser(
  head: string,
  options: { list?: readonly Parser[]; minScore?: number } = {},
): Parser | undefined {
  let best: Parser | undefined;
  let bestScore = options.minScore === undefined ? DETECT_MIN_SCORE - Number.EPSILON : options.minScore;
  for (const parser of options.list ?? parsers) {
    let score = 0;
    try {
      score = parser.detect(head);
    } catch {
      score = 0;
    }
    if (score > bestScore) {
      best = parser;
      bestScore = score;
    }
  }
  return best;
}

/**
 * What `parseReport` reads: text, bytes, a chunk stream (read once), or a file.
 * Bytes, byte streams and files that start with the gzip magic bytes (`1f 8b`)
 * are decompressed as they are read, whatever the file's name.
 */
export type ReportInput = string | Uint8Array | AsyncIterable<string | Uint8Array> | { path: string };

/** The lines that delimit a run's test output in a log (berth writes a nonce into them). */
export interface ReportMarkers {
  /** A line containing this string starts the test output. */
  start: string;
  /** A line containing this string ends it. */
  end: string;
  /**
   * A line containing this string followed by an integer gives the runner's
   * exit code (SWE-bench HEAD prints `>>>>> Test Exit Code: N` after the end marker).
   */
  exitCode?: string;
}

export interface ParseReportOptions {
  /** Registry name or alias; detected from the first 64 KiB when absent. */
  format?: string;
  /** Keep every per-element result (graders with their own duplicate rules). */
  keepElements?: boolean;
  /** The run's markers; the output between them is parsed when they are present. */
  markers?: ReportMarkers;
  /** The test runner's exit code, when known (overrides one found by `markers.exitCode`). */
  exitCode?: number;
  /** Name of the input for messages (defaults to the path, or `<input>`). */
  sourceName?: string;
}

/** A `ParseResult` plus what `parseReport` found around it. */
export interface ReportResult extends ParseResult {
  /**
   * `between` when the output between the markers was parsed; `whole-log` when
   * markers were asked for but the start marker was missing or nothing between
   * them parsed (SWE-bench's marker fallback), so the whole log was used.
   */
  markers?: 'between' | 'whole-log';
  /** The runner's exit code (given, or read from the exit-code marker line). */
  exitCode?: number;
  /** True when the exit code contradicts the results (0 with failures, non-zero without any). */
  exitCodeContradicts?: boolean;
}

function openInput(input: ReportInput): AsyncIterable<string | Uint8Array> {
  if (typeof input === 'string' || input instanceof Uint8Array) return chunksOf(input);
  if ('path' in input && typeof input.path === 'string') return createReadStream(input.path);
  return input as AsyncIterable<string | Uint8Array>;
}

/**
 * Reads chunks until at least `bytes` are buffered; returns them as text (the
 * detection head) and a stream that replays them before the rest.
 */
async function peek(
  source: AsyncIterable<string | Uint8Array>,
  bytes: number,
): Promise<{ head: string; stream: AsyncIterable<string | Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]();
  const buffered: Array<string | Uint8Array> = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    buffered.push(next.value);
    size += next.value.length;
  }
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let head = '';
  for (const chunk of buffered)
    head += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
  head = head.slice(0, bytes);
  async function* replay(): AsyncGenerator<string | Uint8Array> {
    yield* buffered;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head, stream: replay() };
}

/**
 * A single-producer, two-consumer channel with backpressure: the producer
 * waits while either consumer has more than `limit` batches unread.
 */
class Tee {
  private readonly queues: string[][] = [[], []];
  private readonly abandoned = [false, false];
  private readonly wakeConsumer: Array<(() => void) | undefined> = [undefined, undefined];
  private wakeProducer: (() => void) | undefined;
  private closed = false;
  private failure: unknown;

  constructor(private readonly limit = 8) {}

  private full(): boolean {
    return this.queues.some((queue, i) => !this.abandoned[i] && queue.length >= this.limit);
  }

  async push(a: string, b: string): Promise<void> {
    while (this.full()) {
      await new Promise<void>((resolve) => {
        this.wakeProducer = resolve;
      });
    }
    if (a && !this.abandoned[0]) this.queues[0]?.push(a);
    if (b && !this.abandoned[1]) this.queues[1]?.push(b);
    this.wake();
  }

  close(error?: unknown): void {
    this.closed = true;
    this.failure = error;
    this.wake();
  }

  private wake(): void {
    for (let i = 0; i < 2; i++) {
      const resolve = this.wakeConsumer[i];
      this.wakeConsumer[i] = undefined;
      resolve?.();
    }
  }

  private release(): void {
    const resolve = this.wakeProducer;
    this.wakeProducer = undefined;
    resolve?.();
  }

  async *consume(index: 0 | 1): AsyncGenerator<string> {
    const queue = this.queues[index] as string[];
    try {
      for (;;) {
        if (queue.length > 0) {
          const batch = queue.shift() as string;
          this.release();
          yield batch;
          continue;
        }
        if (this.closed) {
          if (this.failure !== undefined) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => {
          this.wakeConsumer[index] = resolve;
        });
      }
    } finally {
      // A consumer that stopped early must not block the producer.
      this.abandoned[index] = true;
      queue.length = 0;
      this.release();
    }
  }
}

interface MarkerScan {
  startSeen: boolean;
  endSeen: boolean;
  startCount: number;
  exitCode?: number;
}

/**
 * Feeds the tee: consumer 0 gets the lines between the markers, consumer 1
 * every line. Lines are batched (about 64 KiB) to keep per-line overhead low.
 */
async function splitByMarkers(
  stream: AsyncIterable<string | Uint8Array>,
  markers: ReportMarkers,
  tee: Tee,
  scan: MarkerScan,
): Promise<void> {
  let inside = false;
  let between = '';
  let whole = '';
  try {
    for await (const raw of readLines(stream)) {
      const line = raw.includes('\u001b') ? stripAnsi(raw) : raw;
      whole += `${raw}\n`;
      if (line.includes(markers.start)) {
        scan.startCount++;
        if (!scan.startSeen) {
          scan.startSeen = true;
          inside = true;
        }
      } else if (inside && line.includes(markers.end)) {
        inside = false;
        scan.endSeen = true;
      } else if (inside) {
        between += `${raw}\n`;
      }
      if (markers.exitCode !== undefined) {
        const at = line.indexOf(markers.exitCode);
        if (at !== -1) {
          const m = /^\s*(-?\d+)/.exec(line.slice(at + markers.exitCode.length));
          if (m) scan.exitCode = Number(m[1]);
        }
      }
      if (whole.length >= 65536) {
        await tee.push(between, whole);
        between = '';
        whole = '';
      }
    }
    await tee.push(between, whole);
    tee.close();
  } catch (error) {
    tee.close(error);
  }
}

/**
 * Parses a report or console log.
 *
 * - A gzip-compressed input (magic bytes `1f 8b`) is decompressed as it streams;
 *   corrupt gzip data throws `InputError` naming the input, gzip data that ends
 *   early parses what it holds and sets `truncated`.
 * - The format is `options.format` (a registry name or alias) or detected from
 *   the first 64 KiB (of the decompressed text); an undetectable input throws `InputError` naming it.
 * - With `options.markers`, the output between the start and end marker lines
 *   is parsed. When the start marker is missing, or nothing between the markers
 *   parses to a test, the whole log is used instead and `markers` says
 *   `whole-log` (SWE-bench's fallback for results printed outside the markers,
 *   `tests/test_grading_marker_fallback.py`); both cases add a warning. Both
 *   views are parsed in one pass over the input.
 * - ANSI colour codes are removed before matching (every text parser strips them per line).
 * - An exit code (given, or read from the `markers.exitCode` line) of 0 with
 *   failed or error tests, or non-zero with none, sets `exitCodeContradicts`
 *   and adds a warning (SWE-bench HEAD rejects a non-zero exit with no failure: forged output).
 */
export async function parseReport(
  input: ReportInput,
  options: ParseReportOptions = {},
): Promise<ReportResult> {
  const sourceName =
    options.sourceName ??
    (typeof input === 'object' && input !== null && 'path' in input && typeof input.path === 'string'
      ? input.path
      : '<input>');
  let parser: Parser;
  const gzip: GzipState = { compressed: false, truncated: false };
  let stream: AsyncIterable<string | Uint8Array> = maybeGunzip(openInput(input), sourceName, gzip);
  if (options.format !== undefined) {
    parser = getParser(options.format);
  } else {
    const peeked = await peek(stream, DETECT_HEAD_BYTES).catch((error) => {
      throw readError(error, sourceName);
    });
    stream = peeked.stream;
    const detected = detectParser(peeked.head);
    if (!detected) {
      throw new InputError(
        { file: sourceName },
        `cannot tell the report format from its first ${DETECT_HEAD_BYTES / 1024} KiB; name it (--format) as one of: ${knownFormats()}`,
      );
    }
    parser = detected;
  }
  const parseOptions = { keepElements: options.keepElements, sourceName };
  let result: ReportResult;
  try {
    result = await parseWith(parser, stream, parseOptions, options);
  } catch (error) {
    throw readError(error, sourceName);
  }
  if (gzip.truncated) {
    result.truncated = true;
    result.warnings = [...result.warnings, 'the gzip data ends early: the file looks cut short'];
  }
  return result;
}

/** A file that cannot be read is bad input naming it; anything else passes through. */
function readError(error: unknown, sourceName: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') {
    return new InputError({ file: sourceName }, `cannot read: ${(error as Error).message}`, { cause: error });
  }
  return error;
}

async function parseWith(
  parser: Parser,
  stream: AsyncIterable<string | Uint8Array>,
  parseOptions: { keepElements?: boolean; sourceName: string },
  options: ParseReportOptions,
): Promise<ReportResult> {
  let result: ReportResult;
  let exitCode = options.exitCode;
  if (options.markers) {
    const tee = new Tee();
    const scan: MarkerScan = { startSeen: false, endSeen: false, startCount: 0 };
    const producing = splitByMarkers(stream, options.markers, tee, scan);
    const [between, whole] = await Promise.all([
      parser.parse(tee.consume(0), parseOptions),
      parser.parse(tee.consume(1), parseOptions),
    ]);
    await producing;
    if (scan.startSeen && between.tests.length > 0) {
      result = { ...between, markers: 'between' };
      if (!scan.endSeen) {
        result.truncated = true;
        result.warnings = [...result.warnings, 'end marker missing: the test output looks cut short'];
      }
      if (scan.startCount > 1) {
        result.warnings = [
          ...result.warnings,
          `start marker seen ${scan.startCount} times; the output after the first one was used`,
        ];
      }
    } else {
      const why = scan.startSeen ? 'no test result between the markers' : 'start marker not found';
      result = {
        ...whole,
        markers: 'whole-log',
        warnings: [...whole.warnings, `${why}: parsed the whole log instead`],
      };
    }
    if (exitCode === undefined && scan.exitCode !== undefined) exitCode = scan.exitCode;
  } else {
    result = await parser.parse(stream, parseOptions);
  }

  if (exitCode !== undefined) {
    result.exitCode = exitCode;
    const failing = result.counts.failed + result.counts.error;
    if (exitCode === 0 && failing > 0) {
      result.exitCodeContradicts = true;
      result.warnings = [...result.warnings, `the runner exited 0 but ${failing} test(s) failed or errored`];
    } else if (exitCode !== 0 && failing === 0) {
      result.exitCodeContradicts = true;
      result.warnings = [
        ...result.warnings,
        `the runner exited ${exitCode} but no failed or errored test was parsed (a crash outside the tests, or forged output)`,
      ];
    }
  }
  return result;
}
