/**
 * Layer (a): the console is not trusted alone. What berth's probe saw inside the test runner
 * (probes.ts) is checked against the console's results and the command's exit code:
 *
 * - the probe began but wrote no end-of-session report: the process ended before the runner
 *   finished (`os._exit`, a signal, a crash): whatever the console says was never concluded;
 * - the runner's output is in the log but the probe never began: the runner was replaced or
 *   configured to drop berth's plugin;
 * - a report that does not carry this run's secret (forged or stale);
 * - the runner ended its session with failures and the process exited 0 anyway (atexit, a
 *   thread, `os._exit` after the session);
 * - pytest reports rewritten after pytest made them, or saying passed for a call that raised;
 * - pytest's own functions or classes replaced during the run by code of the repository (or by
 *   code with no file: `exec`);
 * - a skip or xfail raised by code the patch changed (an xfail counts as a pass for SWE-bench);
 * - test functions swapped before pytest ran them (the code a test calls is of a file the patch
 *   changed, or from another file than a plainly defined test's own);
 * - a test the console shows passing that the runner's own report does not have passing.
 *
 * Findings on passes only the SWE-bench rules grant (its last-line-wins parsing) are recorded
 * without a veto: berth's own verdict did not rely on them.
 */
import { isAbsolute, posix, relative } from 'node:path';
import { type GuardFile, type GuardLine, readGuardStream } from './node-guard.ts';
import type { ArmedProbes, ProbeFiles } from './probes.ts';
import type { TamperFinding } from './types.ts';

/** A graded test the console shows passing (under the rules named). */
export interface ConsolePass {
  /** The id as reported (the matched id for prefix matches). */
  id: string;
  /** Whether berth's own verdict (default rules) counts this pass (else only the SWE-bench rules do). */
  default: boolean;
  swebench: boolean;
  /** PASS_TO_PASS tests also hold when skipped. */
  category: string;
}

export interface CrossCheckInput {
  armed: ArmedProbes;
  files: ProbeFiles;
  exitCode: number | null;
  timedOut: boolean;
  /** The parser that read the console, if any. */
  parserName?: string;
  /** The console output of the test command. */
  log: string;
  consolePasses: ConsolePass[];
  /** Repository-relative paths the submitted patch creates or changes. */
  patchPaths: ReadonlySet<string>;
  /** Test files (repository-relative) the test patch touches. */
  testFiles: ReadonlySet<string>;
  /** The repository folder inside the environment. */
  workdir: string;
}

export interface CrossCheckResult {
  findings: TamperFinding[];
  notes: string[];
  /** Which probe reports were read and authentic. */
  pytestReport: boolean;
  nodeReport: boolean;
}

interface PytestReport {
  nonce?: string;
  exitstatus?: number;
  tests?: Record<string, string[]>;
  rewritten?: { id: string; when: string; made: string; logged: string }[];
  raised_but_passed?: { id: string; when: string; exception: string }[];
  skip_origins?: { id: string; when: string; kind: string; file: string; line: number }[];
  /** The interpreter's exception classes found replaced at a test's report (or the session's end). */
  builtins_replaced?: { name: string; seen_at: string }[];
  /** XFAIL reports whose test file, conftest.py files on its way and ini file never say xfail. */
  xfail_unexplained?: { id: string; when: string }[];
  /**
   * `genuine`: whether the replacement's code is what the file it names compiles to (false: it
   * only claims that file and line; null: no code, or the file could not be compiled).
   */
  internals_changed?: {
    name: string;
    file: string | null;
    file_exists: boolean;
    genuine?: boolean | null;
    /** The file is under the interpreter's prefix, standard library or site-packages. */
    installed?: boolean;
  }[];
  /** `installed`: under the interpreter's prefix, standard library or site-packages; `probe`: berth's own. */
  plugins?: { name: string; file: string; installed?: boolean; probe?: boolean }[];
  imports?: {
    hooks?: { where: string; type: string; files: CodeFile[] }[];
    test_modules?: Record<
      string,
      {
        file: string | null;
        loader: string;
        loader_allowed: boolean;
        loader_files?: CodeFile[];
        loader_path: string | null;
      }
    >;
  } | null;
  test_origins?: TestOrigin[] | null;
  trace_hooks?: { kind: string; file: string | null; file_exists: boolean }[] | null;
}

/** A collected test whose called code is not from the file that defines it, as the probe saw it. */
interface TestOrigin {
  id: string;
  /** The file the test was collected from (a method's: the file of the class that defines it). */
  test_file?: string;
  /** Where the code pytest will call comes from (null: no Python code, a C callable). */
  file?: string | null;
  line?: number | null;
  file_exists?: boolean;
  /** The test file defines the test with no decorators but pytest marks (null: no such def). */
  plain_def?: boolean | null;
  /** The code names the test file and line but is not what that file compiles to. */
  forged?: boolean;
  error?: string;
}

/** A file code came from, as the probe saw it. */
interface CodeFile {
  file: string;
  exists: boolean;
}

function parseJson<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/** A path inside the environment as repository-relative, or undefined when outside the repository. */
function inRepo(path: string | null | undefined, workdir: string): string | undefined {
  if (!path) return undefined;
  const rel = isAbsolute(path) ? relative(workdir, path) : posix.normalize(path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel.split('\\').join('/');
}

/** `test_x[/tmp/abc/file.py]` -> `test_x[/file.py]` (SWE-bench's parse_log_pytest_options). */
function shortenTempParams(id: string): string {
  return id.replace(/\[\/(?!\/)[^\]*]*\/([^/\]]+)\]$/, '[/$1]');
}

const PASSING = new Set(['PASSED', 'XPASS', 'XFAIL']);

function list(ids: string[]): string {
  return `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ` and ${ids.length - 5} more` : ''}`;
}

/** Compares the probes' reports with the console and the exit code. */
export function crossCheck(input: CrossCheckInput): CrossCheckResult {
  const findings: TamperFinding[] = [];
  const notes = [...input.armed.notes];
  const finding = (f: Omit<TamperFinding, 'layer'>) => findings.push({ layer: 'runner-report', ...f });
  const ended = !input.timedOut && input.exitCode !== null;
  let pytestReport = false;
  let nodeReport = false;

  // ---- pytest
  if (input.armed.pytest) {
    const started = parseJson<{ nonce?: string }>(input.files.pytestStarted);
    const report = parseJson<PytestReport>(input.files.pytestReport);
    // pytest must have run when the command names it, the log is read as pytest's, or pytest's
    // session header is in it.
    const pytestSeen =
      /(^|[\s;&|(/=])(py\.test|pytest)(\s|$)/.test(input.armed.testCommand) ||
      /pytest/i.test(input.parserName ?? '') ||
      /^=+ test session starts =+$/m.test(input.log);
    if (started && started.nonce !== input.armed.nonce) {
      finding({
        kind: 'runner-report-invalid',
        veto: true,
        message: "the pytest probe's start file does not carry this run's secret (written by something else)",
      });
    } else if (report && report.nonce !== input.armed.nonce) {
      finding({
        kind: 'runner-report-invalid',
        veto: true,
        message:
          "pytest's end-of-session report does not carry this run's secret (written by something else)",
      });
    } else if (started && !report) {
      // A run that stops early with a failing exit code is a crash, not a pass in disguise.
      finding({
        kind: 'runner-report-missing',
        veto: input.exitCode === 0,
        message: `pytest began but never finished its session (no end-of-session report): the process ended early${input.exitCode !== null ? ` with exit code ${input.exitCode}` : ''} (os._exit, a signal or a crash), so the console's results were never concluded`,
      });
    } else if (!started && pytestSeen && input.files.pytestReport === undefined) {
      finding({
        kind: 'runner-not-probed',
        veto: true,
        message:
          "pytest's output is in the log but berth's pytest probe never began: the runner was replaced (a shadowing module) or configured to leave berth's plugin out",
      });
    } else if (report) {
      pytestReport = true;
      checkPytest(report, input, finding, notes, ended);
    }
  }

  // ---- node:test
  if (input.armed.node) {
    const started = parseJson<{ nonce?: string }>(input.files.nodeStarted);
    const lines = (input.files.nodeReport ?? '')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => parseJson<NodeEvent>(l))
      .filter((e): e is NodeEvent => e !== undefined);
    const end = lines.find((e) => e.type === 'end');
    if (started && started.nonce !== input.armed.nonce) {
      finding({
        kind: 'runner-report-invalid',
        veto: true,
        message: "the node:test probe's start file does not carry this run's secret",
      });
    } else if (end && end.nonce !== input.armed.nonce) {
      finding({
        kind: 'runner-report-invalid',
        veto: true,
        message: "node's test report does not carry this run's secret (written by something else)",
      });
    } else if (started && !end && ended) {
      finding({
        kind: 'runner-report-missing',
        veto: input.exitCode === 0,
        message: 'node --test began but its report never ended: the runner stopped before the end of its run',
      });
    } else if (!started && input.consolePasses.length > 0) {
      finding({
        kind: 'runner-not-probed',
        veto: true,
        message: "the log shows test results but berth's node:test reporter never began",
      });
    } else if (end) {
      nodeReport = true;
      checkNode(lines, end, input, finding);
      const pid = (started as { pid?: unknown } | undefined)?.pid;
      checkNodeGuard(lines, typeof pid === 'number' ? pid : undefined, input, finding, notes);
    }
  }
  return { findings, notes, pytestReport, nodeReport };
}

type Add = (f: Omit<TamperFinding, 'layer'>) => void;

function checkPytest(
  report: PytestReport,
  input: CrossCheckInput,
  finding: Add,
  notes: string[],
  ended: boolean,
): void {
  if (ended && input.exitCode === 0 && typeof report.exitstatus === 'number' && report.exitstatus !== 0) {
    finding({
      kind: 'exit-code',
      veto: true,
      message: `pytest ended its session with exit status ${report.exitstatus}, but the process exited 0: the exit code was changed after pytest finished (atexit, a thread, os._exit)`,
    });
  }
  // Outcomes made better after pytest made them (a plugin may turn a failure into `rerun`, never into a pass).
  const rewritten = (report.rewritten ?? []).filter(
    (r) => (r.logged === 'passed' && r.made !== 'passed') || (r.made === 'failed' && r.logged === 'skipped'),
  );
  if (rewritten.length > 0)
    finding({
      kind: 'outcome-rewritten',
      veto: true,
      message: `test reports were rewritten after pytest made them (a hookwrapper of a conftest.py or plugin): ${list(rewritten.map((r) => `${r.id} (${r.when}) ${r.made} -> ${r.logged}`))}`,
      tests: rewritten.map((r) => r.id),
    });
  const raised = report.raised_but_passed ?? [];
  if (raised.length > 0)
    finding({
      kind: 'outcome-rewritten',
      veto: true,
      message: `tests raised yet their reports say passed (pytest's report objects patched): ${list(raised.map((r) => `${r.id} (${r.exception})`))}`,
      tests: raised.map((r) => r.id),
    });
  const internals = report.internals_changed ?? [];
  const foreign = internals.filter(
    (c) =>
      !c.file_exists ||
      c.genuine === false ||
      c.installed === false ||
      inRepo(c.file, input.workdir) !== undefined,
  );
  if (foreign.length > 0)
    finding({
      kind: 'runner-internals',
      veto: true,
      message: `pytest's own code was replaced while the tests ran, by code of the repository, code with no file, code of a file not installed, or code that only claims a file it was not compiled from (or that is not the code of that name): ${list(foreign.map((c) => `${c.name} (from ${c.file ?? 'nowhere'}${c.genuine === false ? ', not what that file compiles to' : ''})`))}`,
      paths: [...new Set(foreign.map((c) => inRepo(c.file, input.workdir) ?? c.file ?? '?'))],
    });
  const others = internals.filter((c) => !foreign.includes(c));
  if (others.length > 0)
    notes.push(
      `pytest internals changed by installed plugins (allowed): ${list(others.map((c) => `${c.name} (${c.file})`))}`,
    );
  const builtins = report.builtins_replaced ?? [];
  if (builtins.length > 0)
    finding({
      kind: 'builtins-replaced',
      veto: true,
      message: `the interpreter's exception classes were replaced while the tests ran (an assert raises builtins.AssertionError by name): ${list(builtins.map((b) => `${b.name} (seen at ${b.seen_at})`))}`,
    });
  const unexplained = report.xfail_unexplained ?? [];
  if (unexplained.length > 0)
    finding({
      kind: 'xfail-unexplained',
      veto: true,
      message: `tests ended XFAIL although neither their file, a conftest.py on its way nor the ini file marks anything xfail (code of the run added the mark or raised pytest's xfail exception): ${list(unexplained.map((u) => u.id))}`,
      tests: unexplained.map((u) => u.id),
    });
  const origins = (report.skip_origins ?? []).filter((o) => {
    const rel = inRepo(o.file, input.workdir);
    return rel !== undefined && input.patchPaths.has(rel) && !input.testFiles.has(rel);
  });
  if (origins.length > 0)
    finding({
      kind: 'skip-origin',
      veto: true,
      message: `code the patch changed marked tests ${[...new Set(origins.map((o) => o.kind))].join('/')}: ${list(origins.map((o) => `${o.id} (${inRepo(o.file, input.workdir)}:${o.line})`))}`,
      tests: origins.map((o) => o.id),
    });
  const plugins = (report.plugins ?? []).filter((p) => {
    const rel = inRepo(p.file, input.workdir);
    return rel !== undefined && posix.basename(rel) !== 'conftest.py' && input.patchPaths.has(rel);
  });
  // A plugin from a file neither of the repository nor installed with the interpreter, and not
  // berth's probe: written during the run (a reviewer, session 9: package code wrote a
  // makereport hook to a temp folder and registered it through the plugin manager).
  const written = (report.plugins ?? []).filter(
    (p) => p.installed === false && p.probe !== true && inRepo(p.file, input.workdir) === undefined,
  );
  if (plugins.length > 0 || written.length > 0)
    finding({
      kind: 'runner-plugin',
      veto: true,
      message: `pytest loaded plugins from files the patch changed or files neither of the repository nor installed: ${list([...plugins.map((p) => inRepo(p.file, input.workdir) as string), ...written.map((p) => p.file)])}`,
      paths: [...plugins.map((p) => inRepo(p.file, input.workdir) as string), ...written.map((p) => p.file)],
    });

  // Test modules loaded by someone else's import hook (code the patch changed, or code with no
  // file), or pointed at another file than their own; hooks whose code the patch changed.
  const imports = report.imports ?? undefined;
  const patched = (f: CodeFile) => {
    const rel = inRepo(f.file, input.workdir);
    return rel !== undefined && input.patchPaths.has(rel);
  };
  const foreignCode = (files: CodeFile[]) =>
    files.length === 0 || files.some(patched) || files.every((f) => !f.exists);
  const foreignLoaders = Object.entries(imports?.test_modules ?? {}).filter(
    ([, m]) =>
      (!m.loader_allowed && foreignCode(m.loader_files ?? [])) ||
      (m.loader_path !== null && m.file !== null && m.loader_path !== m.file),
  );
  const repoHooks = (imports?.hooks ?? []).filter((h) => h.files.some(patched));
  if (foreignLoaders.length > 0 || repoHooks.length > 0) {
    const paths = [
      ...foreignLoaders.flatMap(([, m]) => m.loader_files ?? []),
      ...repoHooks.flatMap((h) => h.files),
    ]
      .filter(patched)
      .map((f) => inRepo(f.file, input.workdir) as string);
    finding({
      kind: 'import-hook',
      veto: true,
      message: `test modules were not loaded from their own files by Python's or pytest's loaders: ${list([
        ...foreignLoaders.map(
          ([name, m]) =>
            `${name} (loader ${m.loader}${m.loader_path && m.loader_path !== m.file ? ` reading ${m.loader_path}` : ''})`,
        ),
        ...repoHooks.map((h) => `${h.where} ${h.type}`),
      ])}`,
      ...(paths.length > 0 ? { paths: [...new Set(paths)] } : {}),
    });
  } else if (imports?.test_modules) {
    const others = Object.entries(imports.test_modules).filter(([, m]) => !m.loader_allowed);
    if (others.length > 0)
      notes.push(
        `test modules loaded by installed import hooks (allowed): ${list(others.map(([n, m]) => `${n} (${m.loader})`))}`,
      );
  }

  checkTestOrigins(report, input, finding, notes);

  // The console's passes must be pytest's own.
  const tests = report.tests ?? {};
  const normalised = new Map<string, string[]>();
  for (const [id, statuses] of Object.entries(tests)) normalised.set(shortenTempParams(id), statuses);
  const disagree = (pass: ConsolePass): boolean => {
    const statuses = tests[pass.id] ?? normalised.get(shortenTempParams(pass.id));
    if (!statuses) return true;
    if (statuses.includes('FAILED') || statuses.includes('ERROR')) return true;
    return !statuses.some((s) => PASSING.has(s) || (s === 'SKIPPED' && pass.category === 'PASS_TO_PASS'));
  };
  consoleFindings(input.consolePasses.filter(disagree), "pytest's own report", finding);
}

/**
 * Tests whose code was swapped: a collected test function that calls code of a file the patch
 * changed (outside the test patch's files), or a test the test file defines plainly (no
 * decorators but pytest marks) that calls code from another file than its own, other than a
 * loaded pytest plugin's. Decorated tests call their decorators' code: allowed (noted). A
 * profile or trace function of code the patch changed, active as the tests were collected, is
 * recorded (no veto: it is how the swap above is done, not a pass by itself).
 */
function checkTestOrigins(report: PytestReport, input: CrossCheckInput, finding: Add, notes: string[]): void {
  const patchedNonTest = (file: string | null | undefined): string | undefined => {
    const rel = inRepo(file, input.workdir);
    return rel !== undefined && input.patchPaths.has(rel) && !input.testFiles.has(rel) ? rel : undefined;
  };
  const pluginFiles = (report.plugins ?? []).map((p) => p.file);
  const fromPlugin = (file: string | null | undefined): boolean =>
    !!file &&
    pluginFiles.some(
      (p) => p === file || (posix.basename(p) === '__init__.py' && file.startsWith(`${posix.dirname(p)}/`)),
    );
  const origins = (report.test_origins ?? []).filter((o) => typeof o?.id === 'string');
  const replaced = origins.filter(
    (o) =>
      !o.error &&
      (o.forged === true ||
        patchedNonTest(o.file) !== undefined ||
        (o.plain_def === true && !fromPlugin(o.file))),
  );
  const where = (o: TestOrigin) =>
    o.file
      ? `${o.forged ? 'code that claims ' : ''}${inRepo(o.file, input.workdir) ?? o.file}${o.line ? `:${o.line}` : ''}${o.forged ? ' but is not what that file compiles to' : ''}`
      : 'no Python code';
  if (replaced.length > 0) {
    const paths = [...new Set(replaced.map((o) => patchedNonTest(o.file)).filter((p): p is string => !!p))];
    finding({
      kind: 'test-replaced',
      veto: true,
      message: `test functions were replaced before pytest ran them: the code called is not the test's own: ${list(replaced.map((o) => `${o.id} (runs ${where(o)})`))}`,
      tests: replaced.map((o) => o.id),
      ...(paths.length > 0 ? { paths } : {}),
    });
  }
  const others = origins.filter((o) => !replaced.includes(o));
  if (others.length > 0)
    notes.push(
      `tests that call code from another file than their own (decorated, allowed): ${list(others.map((o) => (o.error ? `${o.id} (${o.error})` : `${o.id} (runs ${where(o)})`)))}`,
    );
  const hooks = (report.trace_hooks ?? []).filter((h) => typeof h?.kind === 'string');
  const foreignHooks = hooks.filter(
    (h) => patchedNonTest(h.file) !== undefined || (h.file !== null && !h.file_exists),
  );
  if (foreignHooks.length > 0)
    finding({
      kind: 'trace-hook',
      veto: false,
      message: `a ${foreignHooks.map((h) => h.kind).join(' and ')} function of ${foreignHooks.map((h) => (h.file ? (inRepo(h.file, input.workdir) ?? h.file) : '?')).join(', ')} was active as pytest collected the tests (sys.setprofile/settrace by code the patch changed)`,
      paths: [...new Set(foreignHooks.map((h) => patchedNonTest(h.file) ?? h.file ?? '?'))],
    });
  else if (hooks.length > 0)
    notes.push(
      `${hooks.map((h) => `${h.kind} function of ${h.file ?? 'C code'}`).join(', ')} active at collection (allowed)`,
    );
}

interface NodeEvent extends GuardLine {
  type: string;
  name?: string;
  nesting?: number;
  file?: string | null;
  skip?: boolean;
  todo?: boolean;
  nonce?: string;
  exitCode?: number | null;
}

/** One test outcome the runner reported, with its id as berth's TAP parser writes it. */
interface NodeOutcome {
  file: string | null;
  id: string;
  passed: boolean;
  skip: boolean;
  todo: boolean;
}

/** The runner's passes and failures in order, ids as berth's TAP parser writes them (names joined by ' > '). */
function nodeOutcomes(events: NodeEvent[]): NodeOutcome[] {
  const stacks = new Map<string, string[]>();
  const out: NodeOutcome[] = [];
  for (const e of events) {
    if (e.name === undefined || e.nesting === undefined) continue;
    const stack = stacks.get(e.file ?? '') ?? [];
    stacks.set(e.file ?? '', stack);
    if (e.type === 'test:start') {
      stack.length = e.nesting;
      stack[e.nesting] = e.name;
      continue;
    }
    if (e.type !== 'test:pass' && e.type !== 'test:fail') continue;
    out.push({
      file: e.file ?? null,
      id: [...stack.slice(0, e.nesting), e.name].join(' > '),
      passed: e.type === 'test:pass',
      skip: e.skip === true,
      todo: e.todo === true,
    });
  }
  return out;
}

function checkNode(events: NodeEvent[], end: NodeEvent, input: CrossCheckInput, finding: Add): void {
  if (input.exitCode === 0 && typeof end.exitCode === 'number' && end.exitCode !== 0)
    finding({
      kind: 'exit-code',
      veto: true,
      message: `node --test ended its run with exit code ${end.exitCode}, but the command exited 0`,
    });
  const statuses = new Map<string, Set<string>>();
  for (const o of nodeOutcomes(events)) {
    const status = o.passed ? (o.skip ? 'SKIPPED' : 'PASSED') : o.todo || o.skip ? 'SKIPPED' : 'FAILED';
    const set = statuses.get(o.id) ?? new Set<string>();
    set.add(status);
    statuses.set(o.id, set);
  }
  const disagree = (pass: ConsolePass): boolean => {
    const s = statuses.get(pass.id);
    if (!s) return true;
    if (s.has('FAILED')) return true;
    return !(s.has('PASSED') || (s.has('SKIPPED') && pass.category === 'PASS_TO_PASS'));
  };
  consoleFindings(input.consolePasses.filter(disagree), "node's own test events", finding);
}

/**
 * The runner's report against what berth's guard saw inside each test file's process
 * (node-guard.ts): node failed a test (or its function threw) and the runner heard no failure
 * of it; the console shows a test passing whose function the guard never saw return; the
 * guard's messages forged, duplicated or out of order. The runner passes on whatever the child
 * writes in its framing, so only the guard's authenticated records speak for the child.
 */
function checkNodeGuard(
  events: NodeEvent[],
  runnerPid: number | undefined,
  input: CrossCheckInput,
  finding: Add,
  notes: string[],
): void {
  const key = input.armed.guardKey;
  if (!key) return;
  // From the command berth ran, never from the report (a file the tests' processes can write).
  if (/(^|\s)--(experimental-)?test-isolation[= ]none(\s|$)/.test(input.armed.testCommand)) {
    notes.push(
      "node --test ran the test files in its own process (--test-isolation=none): berth's guard in the test processes was not used",
    );
    return;
  }
  const guard = readGuardStream(
    events.filter((e) => e.type === 'guard'),
    key,
    runnerPid,
  );
  if (guard.invalid.length > 0 || guard.duplicated.length > 0)
    finding({
      kind: 'guard-invalid',
      veto: true,
      message: `the messages of berth's guard in the test processes were forged or tampered with: ${list([
        ...guard.invalid,
        ...guard.duplicated.map((f) => `a second hello for ${f}`),
      ])}`,
    });
  if (guard.others > 0)
    notes.push(
      `${guard.others} node process(es) started by the tests loaded berth's guard (not test files of the runner; not checked)`,
    );
  // node reports a test under the file that declared it (a helper module's tests under the
  // helper), not the test file whose process ran it: the guards' records are matched to the
  // runner's outcomes by test id over all the test files' processes, never by path.
  // (The runner's own entry for a file, named by its path, is no test of a child's.)
  const outcomes = nodeOutcomes(events).filter((o) => o.id !== o.file);
  const children = [...guard.files.values()];
  const total = (id: string, pick: (g: GuardFile) => Map<string, number>) =>
    children.reduce((n, g) => n + (pick(g).get(id) ?? 0), 0);
  const failedIds = new Set(children.flatMap((g) => [...g.failed.keys(), ...g.threw.keys()]));

  // Failures node decided (or functions that threw) in a test file's process that the runner never heard of.
  const rewritten: string[] = [];
  for (const id of failedIds) {
    const evidence = children.reduce((n, g) => n + Math.max(g.failed.get(id) ?? 0, g.threw.get(id) ?? 0), 0);
    if (outcomes.filter((o) => o.id === id && !o.passed).length < evidence) rewritten.push(id);
  }
  // A hook that threw fails the tests it ran for (or their suite): the runner must have heard of a failure.
  const anyFailure = outcomes.some((o) => !o.passed);
  const hooks = anyFailure ? [] : children.filter((g) => g.hooksThrew > 0).map((g) => `a hook in ${g.file}`);
  if (rewritten.length > 0 || hooks.length > 0)
    finding({
      kind: 'outcome-rewritten',
      veto: true,
      message: `node failed tests in the test file's process that the runner's report has passing or missing (the child's report to the runner was rewritten): ${list([...rewritten, ...hooks])}`,
      ...(rewritten.length > 0 ? { tests: rewritten } : {}),
    });

  // A test node failed never grades as a pass: not through a second test of the same id that
  // passes, not through a todo or skip the test file did not declare (set while it ran). A
  // graded id the runner reports both passing and failing is refused as well (duplicate-test).
  const failedPassing: ConsolePass[] = [];
  const twins: ConsolePass[] = [];
  for (const pass of input.consolePasses) {
    if (rewritten.includes(pass.id)) continue;
    const results = outcomes.filter((o) => o.id === pass.id);
    const plain = results.filter((o) => o.passed && !o.skip && !o.todo);
    if (failedIds.has(pass.id) && (plain.length > 0 || children.some((g) => g.undeclared.has(pass.id))))
      failedPassing.push(pass);
    else if (plain.length > 0 && results.some((o) => !o.passed)) twins.push(pass);
  }
  passFindings(
    failedPassing,
    'outcome-rewritten',
    "the console shows tests passing (or skipped) that node failed in the test file's process (a second test of the same name, or a todo or skip set while the test ran)",
    finding,
  );
  passFindings(
    twins,
    'duplicate-test',
    'the runner reports graded tests both passing and failing (tests of the same name)',
    finding,
  );

  // Every pass the console shows must be a test whose function the guard saw return, in a
  // process whose guard records reach its exit and whose tests node's harness finished.
  const unseen: ConsolePass[] = [];
  const replaced: ConsolePass[] = [];
  const cut: ConsolePass[] = [];
  const unfinished: ConsolePass[] = [];
  for (const pass of input.consolePasses) {
    const passes = outcomes.filter((o) => o.id === pass.id && o.passed && !o.skip).length;
    // A skip the test file did not declare (set on the test before node ran it: its function
    // never ran) is no PASS_TO_PASS pass: node skipping a test while it runs still saw it return.
    const skips = outcomes.filter((o) => o.id === pass.id && o.passed && o.skip).length;
    if (
      skips > 0 &&
      children.some((g) => g.undeclared.has(pass.id)) &&
      total(pass.id, (g) => g.returned) < passes + skips
    ) {
      unseen.push(pass);
      continue;
    }
    if (passes === 0 || rewritten.includes(pass.id)) continue;
    const returnedIn = children.filter((g) => (g.returned.get(pass.id) ?? 0) > 0);
    if (children.some((g) => g.replaced.has(pass.id))) replaced.push(pass);
    else if (total(pass.id, (g) => g.returned) < passes) unseen.push(pass);
    else if (returnedIn.some((g) => !g.ended)) cut.push(pass);
    else if (returnedIn.some((g) => !g.complete)) unfinished.push(pass);
  }
  passFindings(
    [...new Set(replaced)],
    'test-replaced',
    "the console shows tests passing whose function was replaced after node's runner made them",
    finding,
  );
  passFindings(
    [...new Set(cut)],
    'guard-unconfirmed',
    'the console shows tests passing from a test file whose guard records stop before its process ended (the stream was cut short: later failures may be missing)',
    finding,
  );
  passFindings(
    unfinished,
    'guard-unconfirmed',
    "the console shows tests passing from a test file's process that ended before node's harness finished its tests (process.exit, or tests created that never ended)",
    finding,
  );
  passFindings(
    [...new Set(unseen)],
    'guard-unconfirmed',
    "the console shows tests passing that berth's guard in the test file's process never saw run and return",
    finding,
  );
}

function consoleFindings(disagreeing: ConsolePass[], source: string, finding: Add): void {
  passFindings(
    disagreeing,
    'console-disagrees',
    `the console shows tests passing that ${source} does not`,
    finding,
  );
}

/**
 * One finding for the passes berth's own verdict counts (a veto), one recorded for those only the
 * SWE-bench rules grant.
 */
function passFindings(passes: ConsolePass[], kind: string, what: string, finding: Add): void {
  const vetoing = passes.filter((p) => p.default);
  const harnessOnly = passes.filter((p) => !p.default && p.swebench);
  if (vetoing.length > 0)
    finding({
      kind,
      veto: true,
      message: `${what}: ${list(vetoing.map((p) => p.id))}`,
      tests: vetoing.map((p) => p.id),
    });
  if (harnessOnly.length > 0)
    finding({
      kind,
      veto: false,
      message: `under the SWE-bench rules ${what}: ${list(harnessOnly.map((p) => p.id))}`,
      tests: harnessOnly.map((p) => p.id),
    });
}
