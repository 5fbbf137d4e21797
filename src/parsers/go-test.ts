/**
 * `go test` parser: the `-v` console output and the `-json` event stream
 * (test2json), mixed in one input if need be (build errors reach the console
 * as plain lines even under `-json`). Reads line by line in bounded memory.
 *
 * ## Test ids
 * The test name as Go prints it: `TestA`, subtests `TestA/sub_name` (Go itself
 * replaces spaces in subtest names with `_`), benchmarks without the
 * `-GOMAXPROCS` suffix (`BenchmarkDecode/Digits-8` -> `BenchmarkDecode/Digits`).
 * This is the id SWE-bench's and Multi-SWE-bench's Go parsers produce. The
 * package is kept in each test's `package` field (known once the package's
 * `ok`/`FAIL` line is read; a compiled test binary prints none).
 *
 * ## Statuses
 * `--- PASS` / `pass` -> PASSED, `--- FAIL` / `fail` -> FAILED, `--- SKIP` /
 * `skip` -> SKIPPED; a benchmark result line (`BenchmarkX-8  1000  12 ns/op`)
 * -> PASSED. A test that started (`=== RUN`) but never reported a result
 * (a panic, a timeout, a log cut short) -> FAILED with the reason in `message`.
 * A package that failed without any failing test (a panic in `init`, a
 * `TestMain` exit) gets one ERROR entry `<package> [package failed]`; a build
 * or setup failure (`FAIL pkg [build failed]`, `-json`'s `FailedBuild`) gets
 * `<package> [build failed]` / `<package> [setup failed]`: the package's tests
 * are missing, which graders count as failed.
 * A failing benchmark prints `--- FAIL: BenchmarkX` with no duration: a
 * failure of that benchmark (as go-junit-report reads it), not of its package.
 * Repeated names (`-count=N`, the same name in two packages) merge in `tests`
 * by the default precedence ERROR > FAILED > PASSED > SKIPPED, and `counts`
 * counts every run of a test (a test run three times counts three times) and
 * one result per benchmark name and package, as go-junit-report's report does.
 */
import { addCount, readLines, TestCollector } from './common.ts';
import {
  type ParseOptions,
  type ParseResult,
  type Parser,
  STATUS_PRECEDENCE,
  type StatusCounts,
  type TestCase,
  type TestStatus,
} from './types.ts';

const RESULT = /--- (PASS|FAIL|SKIP): (.+?) \((\d+(?:\.\d+)?)(?:s| seconds)\)\s*$/;
const RUN = /^=== RUN\s+(\S+)\s*$/;
// A benchmark's end: `--- BENCH: BenchmarkX-8` (it logged), `--- FAIL: BenchmarkX`, `--- SKIP: BenchmarkX`.
const END_BENCH = /^\s*--- (BENCH|FAIL|SKIP): (Benchmark\S*?)(?:-\d+)?\s*$/;
const BENCH = /^(Benchmark\S*?)(?:-\d+)?\s+\d+\s+\d+(?:\.\d+)?\s+ns\/op\b/;
const PKG_OK = /^ok\s+(\S+)(?:\s|$)/;
const PKG_FAIL = /^FAIL\s+(\S+)(?:\s+\[(build|setup) failed\]|\s+\d+(?:\.\d+)?s|\s+\(cached\)|\s*$)/;
const PANIC = /^panic: |^fatal error: /;

const STATUS: Record<string, TestStatus> = {
  PASS: 'PASSED',
  BENCH: 'PASSED',
  FAIL: 'FAILED',
  SKIP: 'SKIPPED',
};

interface GoEvent {
  Action?: string;
  Package?: string;
  Test?: string;
  Output?: string;
  Elapsed?: number;
  FailedBuild?: string;
}

/** Streaming state for one `go test` output. */
class GoTestState {
  private readonly collector: TestCollector;
  /** Results of the package whose summary line has not been read yet (text mode). */
  private pending: TestCase[] = [];
  /** Tests that started and have no result yet, by package ('' in text mode). */
  private readonly running = new Map<string, Set<string>>();
  /** Packages with at least one failing test. */
  private readonly failedTests = new Set<string>();
  private readonly packagesWithPseudo = new Set<string>();
  private panicked = false;
  /** Every run of a test counts; a benchmark name counts once per package (`package\0name` -> its status). */
  private readonly counts: StatusCounts = { passed: 0, failed: 0, error: 0, skipped: 0 };
  private readonly benchmarks = new Map<string, TestStatus>();
  /** `-json` output events can end mid-line (a benchmark's name, then its figures): the rest, per package. */
  private readonly partial = new Map<string, string>();
  sawJson = false;
  sawAnything = false;

  constructor(options: ParseOptions) {
    this.collector = new TestCollector('go-test', { keepElements: options.keepElements });
  }

  /** Records one result and counts it (`package` must be set when known). */
  private add(test: TestCase) {
    this.collector.add(test);
    if (test.benchmark === true) {
      const key = `${test.package ?? ''}\u0000${test.id}`;
      const before = this.benchmarks.get(key);
      if (before !== undefined && STATUS_PRECEDENCE[test.status] <= STATUS_PRECEDENCE[before]) return;
      if (before !== undefined) addCount(this.counts, before, -1);
      this.benchmarks.set(key, test.status);
    }
    addCount(this.counts, test.status);
  }

  private started(pkg: string, name: string) {
    let set = this.running.get(pkg);
    if (!set) {
      set = new Set();
      this.running.set(pkg, set);
    }
    set.add(name);
  }

  private finished(pkg: string, name: string) {
    this.running.get(pkg)?.delete(name);
  }

  /** Text mode: a result line; buffered until the package summary names the package. */
  private textResult(test: TestCase) {
    this.sawAnything = true;
    this.finished('', test.id);
    this.pending.push(test);
  }

  private flushPending(pkg: string | undefined, failed: boolean) {
    // Tests that started and never finished in this package.
    const open = this.running.get('');
    if (open && open.size > 0) {
      for (const name of open) {
        this.pending.push({
          id: name,
          status: 'FAILED',
          message: this.panicked
            ? 'no result: the test binary panicked'
            : 'no result: the test never finished',
        });
      }
      open.clear();
    }
    let anyFailed = false;
    for (const test of this.pending) {
      if (pkg !== undefined) test.package = pkg;
      if (test.status === 'FAILED' || test.status === 'ERROR') anyFailed = true;
      this.add(test);
    }
    this.pending = [];
    if (pkg !== undefined && failed && !anyFailed && !this.packagesWithPseudo.has(pkg)) {
      this.pseudo(
        pkg,
        'package failed',
        this.panicked ? 'the package panicked before or between tests' : undefined,
      );
    }
    this.panicked = false;
  }

  private pseudo(pkg: string, what: 'package failed' | 'build failed' | 'setup failed', message?: string) {
    this.sawAnything = true;
    this.packagesWithPseudo.add(pkg);
    this.add({
      id: `${pkg} [${what}]`,
      status: 'ERROR',
      package: pkg,
      pseudo: true,
      ...(message ? { message } : {}),
    });
    this.collector.warn(`package ${pkg}: ${what}; its tests have no results`);
  }

  line(raw: string) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('{') && line.includes('"Action"')) {
      let event: GoEvent | undefined;
      try {
        event = JSON.parse(line) as GoEvent;
      } catch {
        event = undefined;
      }
      if (event && typeof event.Action === 'string') {
        this.sawJson = true;
        this.event(event);
        return;
      }
    }
    this.text(line, undefined);
  }

  /** A console line; `pkg` is set when it came from a `-json` output event. */
  private text(line: string, pkg: string | undefined) {
    const bench = BENCH.exec(line);
    if (bench?.[1]) {
      const test: TestCase = { id: bench[1], status: 'PASSED', benchmark: true };
      if (pkg !== undefined) {
        test.package = pkg;
        this.sawAnything = true;
        this.add(test);
      } else this.textResult(test);
      return;
    }
    const endBench = END_BENCH.exec(line);
    if (endBench?.[2]) {
      // Under -json the fail/skip event of the benchmark says the same.
      if (pkg !== undefined) return;
      const status = STATUS[endBench[1] as string] as TestStatus;
      this.textResult({ id: endBench[2], status, benchmark: true });
      return;
    }
    if (pkg !== undefined) {
      // Under -json the result lines repeat the pass/fail events: only benchmarks and panics matter.
      if (PANIC.test(line)) this.panicked = true;
      return;
    }
    const result = RESULT.exec(line);
    if (result?.[1] && result[2]) {
      const name = result[2].trim();
      const status = STATUS[result[1]] ?? 'FAILED';
      const test: TestCase = { id: name, status, durationSec: Number(result[3]) };
      if (name.startsWith('Benchmark')) test.benchmark = true;
      this.textResult(test);
      return;
    }
    const run = RUN.exec(line);
    if (run?.[1]) {
      this.started('', run[1]);
      this.sawAnything = true;
      return;
    }
    if (PANIC.test(line)) {
      this.panicked = true;
      return;
    }
    const ok = PKG_OK.exec(line);
    if (ok?.[1]) {
      this.flushPending(ok[1], false);
      return;
    }
    const fail = PKG_FAIL.exec(line);
    if (fail?.[1]) {
      if (fail[2] === 'build' || fail[2] === 'setup') {
        this.flushPending(fail[1], false);
        this.pseudo(fail[1], `${fail[2]} failed` as 'build failed' | 'setup failed');
      } else this.flushPending(fail[1], true);
    }
  }

  private event(e: GoEvent) {
    const pkg = e.Package ?? '';
    switch (e.Action) {
      case 'run':
        if (e.Test) this.started(pkg, e.Test);
        this.sawAnything = true;
        return;
      case 'output': {
        if (!e.Output) return;
        const pieces = ((this.partial.get(pkg) ?? '') + e.Output).split('\n');
        const rest = pieces.pop() as string;
        if (rest === '') this.partial.delete(pkg);
        else this.partial.set(pkg, rest.length > 1 << 16 ? rest.slice(0, 1 << 16) : rest);
        for (const piece of pieces) if (piece) this.text(piece, pkg);
        return;
      }
      case 'pass':
      case 'fail':
      case 'skip': {
        const status: TestStatus =
          e.Action === 'pass' ? 'PASSED' : e.Action === 'fail' ? 'FAILED' : 'SKIPPED';
        if (e.Test) {
          this.sawAnything = true;
          this.finished(pkg, e.Test);
          if (status === 'FAILED') this.failedTests.add(pkg);
          const test: TestCase = { id: e.Test, status, package: pkg };
          if (typeof e.Elapsed === 'number') test.durationSec = e.Elapsed;
          if (e.Test.startsWith('Benchmark')) test.benchmark = true;
          this.add(test);
          return;
        }
        const rest = this.partial.get(pkg);
        if (rest) this.text(rest, pkg);
        this.partial.delete(pkg);
        this.closeJsonPackage(pkg, status === 'FAILED', e.FailedBuild);
        return;
      }
      default:
        return;
    }
  }

  private closeJsonPackage(pkg: string, failed: boolean, failedBuild: string | undefined) {
    const open = this.running.get(pkg);
    if (open && open.size > 0) {
      for (const name of open) {
        this.failedTests.add(pkg);
        this.add({
          id: name,
          status: 'FAILED',
          package: pkg,
          message: this.panicked
            ? 'no result: the test binary panicked'
            : 'no result: the test never finished',
        });
      }
      open.clear();
    }
    if (failedBuild) this.pseudo(pkg, 'build failed');
    else if (failed && !this.failedTests.has(pkg) && !this.packagesWithPseudo.has(pkg)) {
      this.pseudo(
        pkg,
        'package failed',
        this.panicked ? 'the package panicked before or between tests' : undefined,
      );
    }
    this.panicked = false;
  }

  result(): ParseResult {
    // Text results after the last summary (a compiled test binary prints none).
    let truncated = false;
    for (const [pkg, open] of this.running) {
      if (open.size > 0 && pkg !== '') {
        truncated = true;
        for (const name of open)
          this.add({
            id: name,
            status: 'FAILED',
            package: pkg,
            message: 'no result: the log ends here',
          });
        open.clear();
      }
    }
    const textOpen = this.running.get('');
    if (textOpen && textOpen.size > 0) {
      truncated = !this.panicked;
      this.flushPending(undefined, false);
    } else if (this.pending.length > 0) this.flushPending(undefined, false);
    if (truncated) {
      this.collector.truncated = true;
      this.collector.warn('the log ends while tests were running (truncated?): those tests count as FAILED');
    }
    const result = this.collector.result();
    result.counts = { ...this.counts };
    return result;
  }
}

/** Parses `go test -v` or `go test -json` output. Never throws on odd input; odd lines are ignored. */
export async function parseGoTest(
  chunks: AsyncIterable<string | Uint8Array>,
  options: ParseOptions = {},
): Promise<ParseResult> {
  const state = new GoTestState(options);
  for await (const line of readLines(chunks)) state.line(line);
  return state.result();
}

export function detectGoTest(head: string): number {
  if (/^\{"Time":"[^"]*","Action":"\w+","Package":/m.test(head)) return 0.95;
  if (/^=== RUN\s+Test\S*\s*$/m.test(head) && /--- (PASS|FAIL|SKIP): \S+ \(/.test(head)) return 0.9;
  if (/^(ok|FAIL)\s+\S+\s+(\d+\.\d+s|\(cached\)|\[build failed\])/m.test(head)) return 0.7;
  if (/^Benchmark\S+\s+\d+\s+[\d.]+ ns\/op/m.test(head)) return 0.7;
  return 0;
}

export const goTestParser: Parser = {
  name: 'go-test',
  aliases: ['gotest', 'go', 'go-test-json', 'parse_log_gotest'],
  description: 'go test -v and -json output (subtests, benchmarks, panics, build failures); id = test name',
  detect: detectGoTest,
  parse: parseGoTest,
};
