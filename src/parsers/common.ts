/**
 * Helpers shared by parsers: reading chunks as lines in bounded memory,
 * stripping ANSI codes, and collecting results with the default duplicate
 * precedence.
 */
import { open } from 'node:fs/promises';
import {
  type ParseResult,
  STATUS_PRECEDENCE,
  type StatusCounts,
  type TestCase,
  type TestStatus,
} from './types.ts';

// CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks, titles).
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape codes are control characters.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** Removes ANSI escape sequences (colours, cursor movement, hyperlinks). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * Yields the lines of a chunked input without their line endings (LF or CRLF),
 * holding at most one partial line in memory. A final line without a newline is
 * yielded too. Lines longer than `maxLineLength` characters are cut (the rest
 * of that line is dropped) so a single huge line cannot exhaust memory.
 */
export async function* readLines(
  chunks: AsyncIterable<string | Uint8Array>,
  maxLineLength = 1 << 20,
): AsyncGenerator<string> {
  for await (const batch of readLineBatches(chunks, maxLineLength)) yield* batch;
}

/**
 * Like `readLines`, but yields the lines of each chunk as one array: the same
 * lines with far less per-line overhead (parsers of large logs use this).
 */
export async function* readLineBatches(
  chunks: AsyncIterable<string | Uint8Array>,
  maxLineLength = 1 << 20,
): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let pending = '';
  let dropping = false;
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const batch: string[] = [];
    let start = 0;
    let index = text.indexOf('\n');
    if (index !== -1) {
      // The first line continues the partial line left by the previous chunk.
      let line = pending + text.slice(0, index);
      pending = '';
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (!dropping) batch.push(line.length > maxLineLength ? line.slice(0, maxLineLength) : line);
      dropping = false;
      start = index + 1;
      for (index = text.indexOf('\n', start); index !== -1; index = text.indexOf('\n', start)) {
        const end = text.charCodeAt(index - 1) === 13 && index > start ? index - 1 : index;
        batch.push(
          end - start > maxLineLength ? text.slice(start, start + maxLineLength) : text.slice(start, end),
        );
        start = index + 1;
      }
      pending = text.slice(start);
    } else {
      pending += text;
    }
    if (pending.length > maxLineLength) {
      if (!dropping) batch.push(pending.slice(0, maxLineLength));
      dropping = true;
      pending = '';
    }
    if (batch.length > 0) yield batch;
  }
  pending += decoder.decode();
  if (pending.length > 0 && !dropping) yield [pending.endsWith('\r') ? pending.slice(0, -1) : pending];
}

/**
 * A copy of `text` that does not keep the (possibly large) string it was
 * sliced from alive. Ids and messages stored for the whole parse use this, so
 * memory stays bounded by the number of tests, not the size of the input.
 */
export function detach(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

/**
 * Reads a UTF-8 text file as a chunk stream through one reused buffer of
 * `chunkBytes` (default 64 KiB, which keeps each decoded chunk in V8's young
 * generation), decoding as it goes: no per-chunk allocation outside the
 * JavaScript heap. For console logs only: byte-exact formats (XML with its own
 * encoding declaration) should get the bytes (`fs.createReadStream`).
 */
export async function* readFileChunks(path: string, chunkBytes = 64 * 1024): AsyncGenerator<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    const decoder = new TextDecoder('utf-8', { fatal: false });
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, chunkBytes, null);
      if (bytesRead === 0) break;
      yield decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  } finally {
    await handle.close();
  }
}

/** Turns a string or buffer into the chunk stream parsers take. */
export async function* chunksOf(input: string | Uint8Array): AsyncGenerator<string | Uint8Array> {
  yield input;
}

/**
 * Collects test results. Duplicates of an id are merged by a precedence
 * (default ERROR > FAILED > PASSED > SKIPPED; the first seen wins ties); every
 * occurrence is kept in `elements` when asked, and a warning counts duplicates.
 */
export class TestCollector {
  private readonly byId = new Map<string, TestCase>();
  private readonly elements: TestCase[] | undefined;
  private duplicates = 0;
  readonly warnings: string[] = [];
  truncated = false;

  constructor(
    private readonly format: string,
    options?: { keepElements?: boolean; precedence?: Record<TestStatus, number> },
  ) {
    this.elements = options?.keepElements ? [] : undefined;
    this.precedence = options?.precedence ?? STATUS_PRECEDENCE;
  }

  private readonly precedence: Record<TestStatus, number>;

  /** Records one occurrence of a test. */
  add(test: TestCase): void {
    if (this.elements) this.elements.push(detachTest(test));
    const previous = this.byId.get(test.id);
    if (previous === undefined) {
      this.byId.set(test.id, detachTest(test));
      return;
    }
    this.duplicates++;
    if (this.precedence[test.status] > this.precedence[previous.status])
      this.byId.set(previous.id, detachTest(test));
  }

  /**
   * Records another report of a test the format prints more than once by
   * design (pytest's `-v` line and its `-rA` summary line; a call result and
   * a teardown error): merged by precedence, not counted as a duplicate.
   */
  merge(test: TestCase): void {
    if (this.elements) this.elements.push(detachTest(test));
    const previous = this.byId.get(test.id);
    if (previous === undefined) {
      this.byId.set(test.id, detachTest(test));
    } else if (this.precedence[test.status] > this.precedence[previous.status]) {
      if (previous.message && !test.message) test.message = previous.message;
      this.byId.set(previous.id, detachTest(test));
    } else if (!previous.message && test.message) {
      previous.message = detach(test.message);
    }
  }

  /**
   * Whether `merge` of a result with this id and status (and a message or not)
   * would change anything: lets a hot loop skip building objects for repeats.
   * Always true when every element is kept.
   */
  changes(id: string, status: TestStatus, hasMessage = false): boolean {
    if (this.elements) return true;
    const previous = this.byId.get(id);
    if (previous === undefined) return true;
    const rank = this.precedence[status];
    const before = this.precedence[previous.status];
    return rank > before || (hasMessage && !previous.message && rank >= before);
  }

  /** The merged results so far, one per id, in first-seen order. */
  tests(): IterableIterator<TestCase> {
    return this.byId.values();
  }

  /** Replaces whatever was recorded for an id (formats whose later lines override earlier ones). */
  set(test: TestCase): void {
    detachTest(test);
    this.elements?.push(test);
    this.byId.set(test.id, test);
  }

  get(id: string): TestCase | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  warn(message: string): void {
    if (this.warnings.length < 100) this.warnings.push(message);
  }

  result(): ParseResult {
    const tests = [...this.byId.values()];
    const warnings = [...this.warnings];
    if (this.duplicates > 0)
      warnings.push(`${this.duplicates} duplicate test result(s) merged by precedence`);
    return {
      format: this.format,
      tests,
      ...(this.elements ? { elements: this.elements } : {}),
      counts: countStatuses(tests),
      warnings,
      truncated: this.truncated,
    };
  }
}

function detachTest(test: TestCase): TestCase {
  test.id = detach(test.id);
  if (test.message !== undefined) test.message = detach(test.message);
  return test;
}

/** Adds `n` results of `status` to `counts` (a negative `n` takes them away). */
export function addCount(counts: StatusCounts, status: TestStatus, n = 1): void {
  if (status === 'PASSED') counts.passed += n;
  else if (status === 'FAILED') counts.failed += n;
  else if (status === 'ERROR') counts.error += n;
  else counts.skipped += n;
}

/** Counts tests by status. */
export function countStatuses(tests: Iterable<TestCase>): StatusCounts {
  const counts: StatusCounts = { passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const test of tests) addCount(counts, test.status);
  return counts;
}
