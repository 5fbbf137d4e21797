/**
 * JUnit XML parser (every common dialect), streaming with saxes so a report of
 * any size parses in bounded memory.
 *
 * Dialects handled: Gradle (`build/test-results/**\/TEST-*.xml`, JUnit 5 names
 * such as `a test that passes()`, the test-retry plugin's repeated
 * testcases), Maven surefire/failsafe (`rerunFailure`, `rerunError`,
 * `flakyFailure`, `flakyError`), pytest `--junitxml`, jest-junit,
 * cargo-nextest, PHPUnit (`<incomplete/>`), mocha; `<testsuites>` or
 * `<testsuite>` roots, `<testsuite>` nested at any depth, missing attributes.
 *
 * ## Test ids
 * - `classname.name`, both trimmed; `name` alone when `classname` is missing
 *   or empty (jest-junit writes `classname=""`).
 * - A testcase without `name` gets `(unnamed testcase #N)`, N counting
 *   testcases in document order from 1, with a warning.
 * - A trailing JVM identity-hash suffix (`@1b2c3d4e`: `@` and 5 or more hex
 *   digits, at least one of them a decimal digit) is stripped from classname
 *   and name, because it changes from run to run. The Kotlin Benchmark strips
 *   any `@hex` suffix; its grader applies that exact rule to the raw elements
 *   (see `src/grading/kotlin-benchmark.ts`).
 * - Parameterised names (`test_x[param1]`, `method(int)[1]`) are kept as
 *   written; graders that drop them do so themselves.
 *
 * ## Status of one testcase element
 * `<error>` -> ERROR, else `<failure>` -> FAILED, else `<skipped>` (or
 * PHPUnit's `<incomplete>`) -> SKIPPED, else PASSED (the most severe result
 * wins, as EnricoMi/publish-unit-test-result-action counts). Surefire reruns:
 * `<flakyFailure>`/`<flakyError>` without a final `<failure>`/`<error>` is a
 * test that passed on rerun -> PASSED with `flaky: true` and `reruns`;
 * `<rerunFailure>`/`<rerunError>` beside a `<failure>`/`<error>` only add the
 * `reruns` count.
 *
 * ## Duplicate ids
 * Within one `<testsuite>` element, a run of FAILED/ERROR occurrences followed
 * by a PASSED one is a retried test (Gradle's test-retry plugin writes each
 * attempt as its own testcase) -> PASSED with `flaky: true` and `attempts`.
 * Otherwise duplicates merge by the default precedence ERROR > FAILED > PASSED
 * > SKIPPED. `keepElements` returns every occurrence with its raw flags for
 * graders with their own rules.
 *
 * ## Safety
 * saxes is a non-validating parser: it never reads a DTD or an external
 * entity, and it does not expand entities declared in an internal DTD, so XXE
 * and entity-expansion bombs cannot read files or grow memory; a reference to
 * such an entity is a parse error.
 */
import { TextDecoder } from 'node:util';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { InputError } from '../errors.ts';
import { countStatuses } from './common.ts';
import {
  type ParseOptions,
  type ParseResult,
  type Parser,
  STATUS_PRECEDENCE,
  type StatusCounts,
  type TestCase,
  type TestStatus,
} from './types.ts';

/** One `<testcase>` element as written, with its result flags (returned in `elements`). */
export interface JUnitElement extends TestCase {
  /** `classname` attribute as written (undefined when absent). */
  classname?: string;
  /** `name` attribute as written (undefined when absent). */
  name?: string;
  /** Name of the innermost enclosing `<testsuite>`. */
  suite?: string;
  /** `file` attribute (pytest xunit1, PHPUnit, jest-junit). */
  file?: string;
  /** Result children present on this testcase. */
  hasSkipped: boolean;
  hasFailure: boolean;
  hasError: boolean;
  /** Surefire/nextest reruns recorded in this element (`rerun*` + `flaky*` children). */
  reruns?: number;
  /** True when the test passed only on a rerun (surefire `flaky*`) or a retry. */
  flaky?: boolean;
}

/** Suite totals as declared by the top-level `<testsuite>` attributes. */
export interface DeclaredTotals extends StatusCounts {
  tests: number;
}

export interface JUnitParseResult extends ParseResult {
  elements?: JUnitElement[];
  /**
   * Sum of the `tests`, `failures`, `errors`, `skipped` (+`disabled`) attributes of the
   * top-level suites, when any is given. A report with suites but no testcase elements
   * carries its totals only here.
   */
  declared?: DeclaredTotals;
  /** Number of `<testcase>` elements read. */
  elementCount: number;
}

const HASH_SUFFIX = /@(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{5,}$/;
const MESSAGE_TEXT_CAP = 2000;

/**
 * A copy of `s` that shares no memory with the parser's input. saxes hands out
 * slices of its input chunks; keeping one alive would keep its whole chunk (up to
 * 1 MB) alive, so every string that outlives the chunk is copied.
 */
export function detach(s: string): string {
  return s.length === 0 ? s : Buffer.from(s, 'utf16le').toString('utf16le');
}

/** Default id rule for one testcase (see the module comment). */
export function junitTestId(
  classname: string | undefined,
  name: string | undefined,
  ordinal: number,
): string {
  const cls = (classname ?? '').trim().replace(HASH_SUFFIX, '');
  const rawName = (name ?? '').trim();
  const method = rawName === '' ? `(unnamed testcase #${ordinal})` : rawName.replace(HASH_SUFFIX, '');
  return cls === '' ? method : `${cls}.${method}`;
}

/** Status of one element from its flags: ERROR > FAILED > SKIPPED > PASSED. */
function elementStatus(e: { hasError: boolean; hasFailure: boolean; hasSkipped: boolean }): TestStatus {
  if (e.hasError) return 'ERROR';
  if (e.hasFailure) return 'FAILED';
  if (e.hasSkipped) return 'SKIPPED';
  return 'PASSED';
}

/** A `<testcase>` being read. */
interface OpenTestcase {
  depth: number;
  classname?: string;
  name?: string;
  suite?: string;
  file?: string;
  durationSec?: number;
  message?: string;
  messageFrom?: string;
  hasSkipped: boolean;
  hasFailure: boolean;
  hasError: boolean;
  xfail?: boolean;
  reruns: number;
  flakyRuns: number;
}

interface Entry {
  /** Result merged over finished suite groups (undefined when none finished). */
  merged?: TestCase;
  /** The group of occurrences inside the current suite element. */
  suite: number;
  count: number;
  worst: TestCase;
  lastStatus: TestStatus;
  /** The last occurrence, kept only when it passed after failures (a retry). */
  lastPass?: TestCase;
  /** Every occurrence of the group before the last failed (FAILED/ERROR). */
  failedBeforeLast: boolean;
}

function better(a: TestCase | undefined, b: TestCase): TestCase {
  if (a === undefined) return b;
  return STATUS_PRECEDENCE[b.status] > STATUS_PRECEDENCE[a.status] ? b : a;
}

function closeGroup(entry: Entry): TestCase {
  if (entry.count > 1 && entry.lastStatus === 'PASSED' && entry.failedBeforeLast && entry.lastPass) {
    return { ...entry.lastPass, flaky: true, attempts: entry.count };
  }
  return entry.worst;
}

/**
 * Drops the content of `<system-out>` and `<system-err>` elements before the
 * XML parser sees it, keeping only its line breaks (so line numbers in
 * messages stay right). saxes gathers a whole text node in memory before
 * reporting it, and a runner's captured output can be hundreds of megabytes in
 * one element; berth never uses it. Works across chunk boundaries.
 */
export class CapturedOutputFilter {
  /** Inside an element being dropped (`drop`) or a CDATA section/comment passed through (`pass`). */
  private mode: { kind: 'drop' | 'pass'; close: string } | undefined;
  private held = '';

  private static readonly START = /<system-(out|err)(?=[\s>/])|<!\[CDATA\[|<!--/g;

  /** Filters the next chunk; returns what can be passed on now. */
  push(chunk: string): string {
    let text = this.held + chunk;
    this.held = '';
    let out = '';
    for (;;) {
      if (this.mode !== undefined) {
        const { kind, close } = this.mode;
        const at = text.indexOf(close);
        if (at === -1) {
          // Keep enough to recognise a terminator split across chunks.
          const keep = Math.min(text.length, close.length - 1);
          out +=
            kind === 'drop' ? newlinesOf(text, 0, text.length - keep) : text.slice(0, text.length - keep);
          this.held = text.slice(text.length - keep);
          return out;
        }
        if (kind === 'drop') {
          out += newlinesOf(text, 0, at);
          text = text.slice(at);
        } else {
          out += text.slice(0, at + close.length);
          text = text.slice(at + close.length);
        }
        this.mode = undefined;
        continue;
      }
      CapturedOutputFilter.START.lastIndex = 0;
      const start = CapturedOutputFilter.START.exec(text);
      if (start === null) {
        // Hold back a trailing `<...` that could start an element split across chunks.
        const lt = text.lastIndexOf('<');
        if (lt !== -1 && text.length - lt < 16 && text.indexOf('>', lt) === -1) {
          this.held = text.slice(lt);
          return out + text.slice(0, lt);
        }
        return out + text;
      }
      if (start[1] === undefined) {
        // A CDATA section or a comment: passed through untouched, whatever it contains.
        const opener = start[0];
        out += text.slice(0, start.index + opener.length);
        text = text.slice(start.index + opener.length);
        this.mode = { kind: 'pass', close: opener === '<!--' ? '-->' : ']]>' };
        continue;
      }
      const end = text.indexOf('>', start.index);
      if (end === -1) {
        this.held = text.slice(start.index);
        return out + text.slice(0, start.index);
      }
      out += text.slice(0, end + 1);
      if (text[end - 1] !== '/') this.mode = { kind: 'drop', close: `</system-${start[1]}` };
      text = text.slice(end + 1);
    }
  }

  /** What is still held at the end of the input. */
  flush(): string {
    const rest = this.mode?.kind === 'drop' ? newlinesOf(this.held, 0, this.held.length) : this.held;
    this.held = '';
    return rest;
  }
}

function newlinesOf(text: string, from: number, to: number): string {
  let n = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return '\n'.repeat(n);
}

/** Decodes byte chunks as UTF-8 (or UTF-16 with a BOM), replacing invalid bytes and warning once. */
class Decoder {
  private decoder: TextDecoder | undefined;
  private fatal = true;
  invalid = false;

  decode(chunk: Uint8Array, stream: boolean): string {
    if (this.decoder === undefined) {
      let label = 'utf-8';
      if (chunk[0] === 0xff && chunk[1] === 0xfe) label = 'utf-16le';
      else if (chunk[0] === 0xfe && chunk[1] === 0xff) label = 'utf-16be';
      this.decoder = new TextDecoder(label, { fatal: true });
    }
    if (this.fatal) {
      try {
        return this.decoder.decode(chunk, { stream });
      } catch {
        this.invalid = true;
        this.fatal = false;
        this.decoder = new TextDecoder(this.decoder.encoding, { fatal: false, ignoreBOM: true });
      }
    }
    return this.decoder.decode(chunk, { stream });
  }
}

/**
 * What `parseJUnit` gathers while saxes reads a report: the open `<testcase>`, the suites
 * around it, the declared totals, and one merged record per test id (see the module comment).
 */
class JUnitCollector {
  readonly warnings: string[] = [];
  readonly elements: JUnitElement[] | undefined;
  /** Number of `<testcase>` elements read. */
  elementCount = 0;
  /** True once the root element was seen. */
  rootSeen = false;
  private readonly byId = new Map<string, Entry>();
  private duplicates = 0;
  private unnamed = 0;
  // Suite stack: index of each open <testsuite> element and its name.
  private readonly suiteStack: { index: number; name?: string }[] = [];
  private suiteCounter = 0;
  private readonly declared: DeclaredTotals = { tests: 0, passed: 0, failed: 0, error: 0, skipped: 0 };
  private declaredAny = false;
  private depth = 0;
  /** The open testcase, if any. */
  private current: OpenTestcase | undefined;
  /** Text of the first failure/error/skipped without a message. */
  private captureText: string | undefined;
  private captureDepth = -1;

  constructor(
    private readonly file: string,
    keepElements: boolean,
    /** The line the parser is at (1-based), for messages. */
    private readonly line: () => number,
  ) {
    this.elements = keepElements ? [] : undefined;
  }

  warn(message: string): void {
    if (this.warnings.length < 100) this.warnings.push(message);
  }

  openTag(tag: SaxesTagPlain): void {
    this.depth++;
    const name = tag.name;
    const attrs = tag.attributes as Record<string, string>;
    if (!this.rootSeen) {
      this.rootSeen = true;
      if (name !== 'testsuites' && name !== 'testsuite') {
        throw new InputError(
          { file: this.file, line: this.line() },
          `not a JUnit XML report: the root element is <${name}>, expected <testsuites> or <testsuite>`,
        );
      }
    }
    if (name === 'testsuite') {
      const topLevel = this.suiteStack.length === 0;
      this.suiteStack.push({ index: ++this.suiteCounter, name: attrs.name });
      if (topLevel) this.addDeclared(attrs);
      return;
    }
    if (name === 'testcase') {
      if (this.current === undefined) this.openTestcase(attrs); // a testcase inside one: ignored
      return;
    }
    if (this.current !== undefined && this.depth === this.current.depth + 1) this.resultChild(name, attrs);
  }

  text(text: string): void {
    const captured = this.captureText;
    if (captured !== undefined && captured.length < MESSAGE_TEXT_CAP) {
      this.captureText = captured + text.slice(0, MESSAGE_TEXT_CAP - captured.length);
    }
  }

  closeTag(tag: SaxesTagPlain): void {
    const current = this.current;
    if (this.captureDepth === this.depth && current !== undefined) {
      const text = (this.captureText ?? '').trim().split('\n', 1)[0]?.trim();
      if (text) current.message = text;
      this.captureText = undefined;
      this.captureDepth = -1;
    }
    if (tag.name === 'testsuite') this.suiteStack.pop();
    else if (tag.name === 'testcase' && current !== undefined && current.depth === this.depth)
      this.finishTestcase(current);
    this.depth--;
  }

  /** The parse result, once the whole report was read. */
  result(invalidUtf8: boolean): JUnitParseResult {
    if (invalidUtf8) this.warn('the input is not valid UTF-8; invalid bytes were replaced with U+FFFD');
    if (this.unnamed > 0)
      this.warn(`${this.unnamed} testcase(s) without a name were given ids "(unnamed testcase #N)"`);
    const tests: TestCase[] = [];
    let retried = 0;
    for (const entry of this.byId.values()) {
      const group = closeGroup(entry);
      if (group.flaky && group.attempts !== undefined) retried++;
      tests.push(better(entry.merged, group));
    }
    if (retried > 0)
      this.warn(`${retried} test(s) failed and then passed on a retry: counted as PASSED (flaky)`);
    const flakyReruns = tests.filter((t) => t.flaky && t.attempts === undefined).length;
    if (flakyReruns > 0)
      this.warn(`${flakyReruns} test(s) passed on a surefire rerun: counted as PASSED (flaky)`);
    if (this.duplicates > 0)
      this.warn(
        `${this.duplicates} duplicate testcase(s) merged (ERROR > FAILED > PASSED > SKIPPED, retries pass)`,
      );
    if (this.elementCount === 0 && this.declaredAny && this.declared.tests > 0) {
      this.warn(`the suites declare ${this.declared.tests} test(s) but hold no <testcase> element`);
    }
    return {
      format: 'junit',
      tests,
      ...(this.elements ? { elements: this.elements } : {}),
      counts: countStatuses(tests),
      warnings: this.warnings,
      truncated: false,
      ...(this.declaredAny ? { declared: this.declared } : {}),
      elementCount: this.elementCount,
    };
  }

  private openTestcase(attrs: Record<string, string>): void {
    this.elementCount++;
    const suite = this.suiteStack[this.suiteStack.length - 1];
    this.current = {
      depth: this.depth,
      classname: attrs.classname,
      name: attrs.name,
      suite: suite?.name,
      ...(attrs.file !== undefined ? { file: attrs.file } : {}),
      ...(attrs.time !== undefined && Number.isFinite(Number(attrs.time))
        ? { durationSec: Number(attrs.time) }
        : {}),
      hasSkipped: false,
      hasFailure: false,
      hasError: false,
      reruns: 0,
      flakyRuns: 0,
    };
  }

  /** A result element directly inside the open testcase. */
  private resultChild(name: string, attrs: Record<string, string>): void {
    const current = this.current;
    if (current === undefined) return;
    switch (name) {
      case 'failure':
        current.hasFailure = true;
        this.noteMessage(current, attrs, 'failure');
        break;
      case 'error':
        current.hasError = true;
        this.noteMessage(current, attrs, 'error');
        break;
      case 'skipped':
      case 'incomplete':
        current.hasSkipped = true;
        if (attrs.type === 'pytest.xfail') current.xfail = true;
        this.noteMessage(current, attrs, 'skipped');
        break;
      case 'rerunFailure':
      case 'rerunError':
        current.reruns++;
        break;
      case 'flakyFailure':
      case 'flakyError':
        current.reruns++;
        current.flakyRuns++;
        break;
    }
  }

  /** The message of the most severe result element: its `message` attribute, else its text. */
  private noteMessage(current: OpenTestcase, attrs: Record<string, string>, kind: string): void {
    const order = { error: 3, failure: 2, skipped: 1 } as Record<string, number>;
    const previous = current.messageFrom ? (order[current.messageFrom] ?? 0) : 0;
    if ((order[kind] ?? 0) < previous) return;
    current.messageFrom = kind;
    const message = (attrs.message ?? '').trim().split('\n', 1)[0]?.trim();
    if (message) {
      current.message = message;
      this.captureDepth = -1;
      this.captureText = undefined;
    } else {
      delete current.message;
      this.captureText = '';
      this.captureDepth = this.depth;
    }
  }

  private addDeclared(attrs: Record<string, string>): void {
    const num = (key: string) => {
      const value = attrs[key];
      if (value === undefined) return 0;
      const n = Number(value);
      return Number.isFinite(n) ? n : 0;
    };
    if (attrs.tests === undefined && attrs.failures === undefined && attrs.errors === undefined) return;
    this.declaredAny = true;
    const tests = num('tests');
    const failed = num('failures');
    const error = num('errors');
    const skipped = num('skipped') + num('disabled');
    const declared = this.declared;
    declared.tests += tests;
    declared.failed += failed;
    declared.error += error;
    declared.skipped += skipped;
    declared.passed += tests - failed - error - skipped;
  }

  private finishTestcase(c: OpenTestcase): void {
    this.current = undefined;
    const ordinal = this.elementCount;
    if ((c.name ?? '').trim() === '') this.unnamed++;
    const id = detach(junitTestId(c.classname, c.name, ordinal));
    const status = elementStatus(c);
    const flaky = status === 'PASSED' && c.flakyRuns > 0;
    const message = c.message !== undefined && status !== 'PASSED' ? c.message : undefined;
    if (this.elements) this.elements.push(elementOf(c, id, status, flaky, message));
    // The merged map keeps one small record per id; a repeated occurrence that changes
    // nothing allocates nothing (a record replaced later would be old-space garbage).
    const makeSlim = (): TestCase => {
      const slim: TestCase = { id, status };
      if (c.durationSec !== undefined) slim.durationSec = c.durationSec;
      if (message !== undefined) slim.message = detach(message);
      if (c.file !== undefined) slim.file = detach(c.file);
      if (flaky) slim.flaky = true;
      if (c.reruns > 0) slim.reruns = c.reruns;
      if (c.xfail) slim.xfail = true;
      return slim;
    };
    const plain = !flaky && c.reruns === 0 && !c.xfail;
    const suite = this.suiteStack[this.suiteStack.length - 1]?.index ?? 0;
    const entry = this.byId.get(id);
    if (entry === undefined) {
      const slim = makeSlim();
      this.byId.set(id, {
        suite,
        count: 1,
        worst: slim,
        lastStatus: status,
        ...(status === 'PASSED' ? { lastPass: slim } : {}),
        failedBeforeLast: true,
      });
      return;
    }
    this.duplicates++;
    if (entry.suite !== suite) {
      const merged = better(entry.merged, closeGroup(entry));
      entry.merged = merged;
      const slim = plain && merged.status === status ? merged : makeSlim();
      entry.suite = suite;
      entry.count = 1;
      entry.worst = slim;
      entry.lastStatus = status;
      entry.lastPass = status === 'PASSED' ? slim : undefined;
      entry.failedBeforeLast = true;
      return;
    }
    entry.failedBeforeLast &&= entry.lastStatus === 'FAILED' || entry.lastStatus === 'ERROR';
    entry.count++;
    if (STATUS_PRECEDENCE[status] > STATUS_PRECEDENCE[entry.worst.status]) entry.worst = makeSlim();
    entry.lastStatus = status;
    entry.lastPass = status === 'PASSED' && entry.failedBeforeLast ? makeSlim() : undefined;
  }
}

/** One testcase element as written (`keepElements`), sharing no memory with the input. */
function elementOf(
  c: OpenTestcase,
  id: string,
  status: TestStatus,
  flaky: boolean,
  message: string | undefined,
): JUnitElement {
  const kd = (v: string | undefined) => (v === undefined ? undefined : detach(v));
  return {
    id,
    status,
    ...(c.durationSec !== undefined ? { durationSec: c.durationSec } : {}),
    ...(message !== undefined ? { message: detach(message) } : {}),
    ...(c.classname !== undefined ? { classname: kd(c.classname) } : {}),
    ...(c.name !== undefined ? { name: kd(c.name) } : {}),
    ...(c.suite !== undefined ? { suite: kd(c.suite) } : {}),
    ...(c.file !== undefined ? { file: kd(c.file) } : {}),
    hasSkipped: c.hasSkipped,
    hasFailure: c.hasFailure,
    hasError: c.hasError,
    ...(c.reruns > 0 ? { reruns: c.reruns } : {}),
    ...(flaky ? { flaky: true } : {}),
    ...(c.xfail ? { xfail: true } : {}),
  };
}

/**
 * Parses a JUnit XML report from chunks.
 * @throws InputError naming the source (and line) when the input is empty, not
 *   well-formed XML, or not JUnit (root other than `<testsuites>`/`<testsuite>`).
 */
export async function parseJUnit(
  chunks: AsyncIterable<string | Uint8Array>,
  options: ParseOptions = {},
): Promise<JUnitParseResult> {
  const file = options.sourceName ?? '<input>';
  // saxes's own line tracking costs about a third of its speed; lines are counted here
  // only when a message needs one: newlines before the current chunk, plus those in it
  // up to the parser's position.
  const parser = new SaxesParser({ xmlns: false, position: false });
  let linesBefore = 0;
  let chunkText = '';
  let chunkStart = 0;
  const currentLine = () => {
    const upTo = Math.max(0, Math.min(chunkText.length, parser.position - chunkStart));
    let line = linesBefore + 1;
    for (let i = chunkText.indexOf('\n'); i !== -1 && i < upTo; i = chunkText.indexOf('\n', i + 1)) line++;
    return line;
  };
  const feed = (text: string) => {
    chunkText = text;
    parser.write(text);
    chunkStart += text.length;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) linesBefore++;
  };
  const collector = new JUnitCollector(file, options.keepElements === true, currentLine);
  parser.on('error', (err) => {
    const message = err.message;
    if (/disallowed character|invalid character entity/i.test(message)) {
      collector.warn(`line ${currentLine()}: ${message} (kept going)`);
      return;
    }
    throw new InputError({ file, line: currentLine() }, `not well-formed XML: ${message}`);
  });
  parser.on('opentag', (tag) => collector.openTag(tag));
  parser.on('text', (text) => collector.text(text));
  parser.on('cdata', (text) => collector.text(text));
  parser.on('closetag', (tag) => collector.closeTag(tag));

  const decoder = new Decoder();
  const filter = new CapturedOutputFilter();
  let sawBytes = false;
  try {
    for await (const chunk of chunks) {
      let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, true);
      if (text.length === 0) continue;
      if (!sawBytes) {
        sawBytes = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      const passed = filter.push(text);
      if (passed) feed(passed);
    }
    const tail = filter.push(decoder.decode(new Uint8Array(0), false)) + filter.flush();
    if (tail) feed(tail);
    if (!sawBytes || !collector.rootSeen) {
      if (!sawBytes) throw new InputError({ file }, 'the file is empty, not a JUnit XML report');
      parser.close();
      throw new InputError({ file }, 'no XML element found, not a JUnit XML report');
    }
    parser.close();
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError({ file, line: currentLine() }, `not well-formed XML: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return collector.result(decoder.invalid);
}

/**
 * Detection: a `<testsuites>` or `<testsuite>` root near the start (0.95), those elements
 * further in (0.6), or any other XML-looking start (0.4: an XML declaration, a DOCTYPE, an
 * entity declaration, a comment or an element). JUnit is the only XML format berth reads, so
 * other XML goes to this parser, whose refusal names the file and line (a DOCTYPE with
 * entities, another root element, malformed XML) instead of "cannot tell the format".
 */
export function detectJUnit(head: string): number {
  const start = head.replace(/^\uFEFF/, '').slice(0, 8192);
  const root =
    /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\]\s*)?>\s*)*<(testsuites|testsuite)[\s>/]/.exec(
      start,
    );
  if (root) return 0.95;
  if (/<testsuites?[\s>]/.test(start) && /<testcase[\s>/]/.test(head)) return 0.6;
  if (/^\s*<(?:\?xml[\s?]|!DOCTYPE\s|!ENTITY\s|!--|[A-Za-z_][\w.:-]*[\s>/])/.test(start)) return 0.4;
  return 0;
}

export const junitParser: Parser = {
  name: 'junit',
  aliases: ['junit-xml', 'xunit', 'surefire', 'gradle-xml', 'junitxml'],
  description:
    'JUnit XML (Gradle, Maven surefire, pytest --junitxml, jest-junit, cargo-nextest, PHPUnit, mocha); id = classname.name',
  detect: detectJUnit,
  parse: parseJUnit,
};
