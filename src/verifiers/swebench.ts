/**
 * The SWE-bench verifier, as SWE-bench's eval script does it, hardened:
 *
 * 1. Discard the agent's changes to every file the test patch touches: reset
 *    them to the base commit and delete the ones the test patch creates
 *    (SWE-bench PR #539); what was discarded is recorded.
 * 2. Apply the test patch (`git apply -v`).
 * 3. Run the test command (`{tests}` replaced by the test files) in its own
 *    process group, without network where the machine allows, with a timeout
 *    that kills the group. berth itself writes the markers
 *    `>>>>> Start Test Output <nonce>` / `>>>>> End Test Output <nonce>` and the
 *    exit code around the captured output; the nonce is random per run and
 *    never given to the tested code, so output cannot forge a marker or a
 *    result outside the real run.
 * 4. Parse the text between the markers (the whole log as a recorded fallback
 *    when that parses to nothing), with the parser the task names or one detected.
 * 5. Grade with SWE-bench's current rules (src/grading/swebench.ts).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { mapSkipLocations } from '../grading/skip-locations.ts';
import {
  type DroppedExpected,
  gradeSwebench,
  type SwebenchGrade,
  type SwebenchRules,
} from '../grading/swebench.ts';
import { harnessReading } from '../grading/swebench-harness.ts';
import { chunksOf } from '../parsers/common.ts';
import { DETECT_HEAD_BYTES, detectParser, findParser, parserNames } from '../parsers/registry.ts';
import type { ParseResult, Parser } from '../parsers/types.ts';
import { checkSnapshotPath } from '../tasks/swebench/load.ts';
import type { RepositorySnapshot, Task } from '../tasks/task.ts';
import { roundSec, verdictsForFile } from '../trials/file-format.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic-write.ts';
import { patchFiles, UndecodablePathError } from '../util/patch-files.ts';
import { shellQuote, unlinkLeadingSymlinks } from '../util/shell.ts';
import { traced } from '../util/trace.ts';
import { pathsAtBase } from './paths-at-base.ts';
import { TamperingCheck } from './tampering/judge.ts';
import type { TamperRecord } from './tampering/types.ts';
import type { TestCounts, Verifier, VerifierResult, VerifyContext } from './verifier.ts';

/** Harbor's exception name for a verifier that could not produce a trustworthy result. */
const PARSE_ERROR = 'VerifierOutputParseError';

export interface SwebenchVerifierOptions {
  /** Parsers to choose from (default: every registered parser). */
  parsers?: readonly Parser[];
  /** Cap on captured test output in bytes (default 50 MiB). */
  maxOutputBytes?: number;
  /**
   * Which rules decide the verdict (default `default`): berth's, which also refuse a pass the
   * tamper checks saw through; or `swebench`, the SWE-bench harness's verdict exactly (findings
   * still recorded). See src/grading/swebench.ts and src/verifiers/tampering/.
   */
  rules?: SwebenchRules;
}

/** What the verifier records in `verifier_result.details`. */
export interface SwebenchDetails {
  status: SwebenchGrade['status'];
  resolved: boolean;
  error_reason?: string;
  FAIL_TO_PASS: { passed: number; total: number };
  PASS_TO_PASS: { passed: number; total: number };
  /** Files the agent had changed that the test patch touches, reset or deleted before it was applied. */
  discarded_agent_changes: string[];
  test_patch_applied: boolean;
  test_command: string;
  exit_code: number | null;
  timed_out: boolean;
  output_truncated: boolean;
  /** Whether the test command ran without network. */
  isolated: boolean;
  parser?: string;
  /** True when the marker slice parsed to nothing and the whole log was parsed instead. */
  used_whole_log: boolean;
  parse_warnings: string[];
  /** Expected ids dropped from the gold lists because they cannot name a test (default rules). */
  dropped_expected?: DroppedExpected[];
  duration_sec: number;
  /** The rules that gave `status` and the reward. */
  rules: SwebenchRules;
  /** The verdict under each rule set (recorded whichever decides). */
  verdict_by_rules: Record<SwebenchRules, { status: SwebenchGrade['status']; resolved: boolean }>;
  /** What the tamper checks saw (src/verifiers/tampering/). */
  tampering: TamperRecord;
}

/** The text strictly between this run's start and end markers, or undefined if either is missing. */
export function betweenMarkers(log: string, nonce: string): string | undefined {
  const start = `>>>>> Start Test Output ${nonce}\n`;
  const end = `\n>>>>> End Test Output ${nonce}\n`;
  const from = log.indexOf(start);
  const to = log.lastIndexOf(end);
  if (from === -1 || to === -1 || to < from + start.length - 1) return undefined;
  return log.slice(from + start.length, to + 1);
}

/**
 * A repository file's text as the tests saw it (read in the environment, sandboxed as the tests
 * run, at most 4 MiB), or undefined: a path that is absolute, climbs out or enters .git, or that
 * cannot be read.
 */
async function readRepoFile(
  env: VerifyContext['environment'],
  file: string,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  if (checkSnapshotPath(file) !== undefined) return undefined;
  const read = await env.exec(`test -f ${shellQuote(file)} && head -c 4194304 -- ${shellQuote(file)}`, {
    timeoutSec: 60,
    network: { mode: 'no-network' },
    ...(signal ? { signal } : {}),
  });
  return read.exitCode === 0 && !read.timedOut ? read.output : undefined;
}

/**
 * The snapshot a local environment's base commit was made from (berth wrote and committed it,
 * src/environments/local/local.ts), or undefined (a folder, a mirror, another environment).
 */
function localSnapshot(context: VerifyContext): RepositorySnapshot | undefined {
  const spec = context.task.environment;
  return spec.kind === 'local' ? spec.snapshot : undefined;
}

/** The files the verifier writes, relative to the trial folder. */
const FILES = { test_output: 'verifier/test-output.txt', report: 'verifier/report.json' };

/** `discarded agent changes to N test file(s)` when the agent's edits to test files were reset. */
function discardedNote(discarded: readonly string[]): string[] {
  return discarded.length > 0 ? [`discarded agent changes to ${discarded.length} test file(s)`] : [];
}

/** Which expected tests did not pass and why, e.g. `FAIL_TO_PASS not passed: 2 failed, 1 missing`. */
export function notPassedReason(
  tests: readonly { category?: string; passed?: boolean; reason?: string }[],
): string | undefined {
  const parts: string[] = [];
  for (const category of ['FAIL_TO_PASS', 'PASS_TO_PASS']) {
    const reasons = new Map<string, number>();
    for (const t of tests) {
      if (t.category === category && !t.passed)
        reasons.set(t.reason ?? 'failed', (reasons.get(t.reason ?? 'failed') ?? 0) + 1);
    }
    if (reasons.size > 0)
      parts.push(`${category} not passed: ${[...reasons].map(([r, n]) => `${n} ${r}`).join(', ')}`);
  }
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** FAIL_TO_PASS and PASS_TO_PASS with none of their tests passed. */
function nonePassed(spec: { failToPass: readonly string[]; passToPass: readonly string[] }): {
  FAIL_TO_PASS: TestCounts;
  PASS_TO_PASS: TestCounts;
} {
  return {
    FAIL_TO_PASS: { passed: 0, total: spec.failToPass.length },
    PASS_TO_PASS: { passed: 0, total: spec.passToPass.length },
  };
}

export class SwebenchVerifier implements Verifier {
  readonly kind = 'swebench' as const;
  readonly needsBaseCommit = true;
  readonly needsAgentResult = true;
  readonly rewardFileByEngine = true;

  expectedCounts(task: Task): { FAIL_TO_PASS: TestCounts; PASS_TO_PASS: TestCounts } | undefined {
    const spec = task.verifier;
    return spec.kind === 'swebench' ? nonePassed(spec) : undefined;
  }

  constructor(private readonly options: SwebenchVerifierOptions = {}) {}

  async verify(context: VerifyContext): Promise<VerifierResult> {
    try {
      return await this.verifyDecodable(context);
    } catch (error) {
      // A path the test patch or the agent's patch names that berth cannot name (not UTF-8):
      // it could be neither reset nor checked, so the patch is refused (trust11).
      const spec = context.task.verifier;
      if (!(error instanceof UndecodablePathError) || spec.kind !== 'swebench') throw error;
      const dir = join(context.trialDir, 'verifier');
      return this.failed(dir, spec, error.message, { discarded: [], paths: [] }, error.name);
    }
  }

  private async verifyDecodable(context: VerifyContext): Promise<VerifierResult> {
    const spec = context.task.verifier;
    if (spec.kind !== 'swebench') throw new Error(`the swebench verifier cannot verify a ${spec.kind} task`);
    const started = performance.now();
    // Paths the test patch touches; absolute ones, ones that climb out with `..` or point into
    // .git are never reset or deleted.
    const touched = new Set<string>();
    for (const file of patchFiles(spec.testPatch)) {
      if (file.oldPath) touched.add(file.oldPath);
      if (file.newPath) touched.add(file.newPath);
    }
    const paths = [...touched].filter((p) => checkSnapshotPath(p) === undefined);
    const command = spec.testCommand.replaceAll('{tests}', spec.testFiles.map(shellQuote).join(' '));
    const check = await traced('verifier: arm probes', () =>
      TamperingCheck.begin(context.environment, {
        command,
        ...(context.agentResult.patch !== undefined ? { patch: context.agentResult.patch } : {}),
        testPatchPaths: paths,
      }),
    );
    try {
      return await this.verifyWith(context, spec, { started, paths, command, check });
    } finally {
      await traced('verifier: dispose', () => check.dispose());
    }
  }

  private async verifyWith(
    context: VerifyContext,
    spec: Extract<VerifyContext['task']['verifier'], { kind: 'swebench' }>,
    {
      started,
      paths,
      command,
      check,
    }: { started: number; paths: string[]; command: string; check: TamperingCheck },
  ): Promise<VerifierResult> {
    const env = context.environment;
    const dir = join(context.trialDir, 'verifier');
    const base = context.baseCommit ?? 'HEAD';
    // Steps 1 and 2 are berth's own git bookkeeping, one script (a few processes per trial):
    // the environment may run it without the isolation wrapper the tests get (`trusted`).
    const GIT =
      'git --literal-pathspecs -c core.hooksPath=/dev/null -c core.quotePath=false -c core.fsmonitor=false';
    const q = shellQuote;

    // 1. Discard the agent's changes to the files the test patch touches.
    const quoted = paths.map(q).join(' ');
    const listed = `@@berth-listed-${randomBytes(8).toString('hex')}@@`;
    const reset = `@@berth-reset-${randomBytes(8).toString('hex')}@@`;
    const testPatch = spec.testPatch.trim() === '' ? undefined : spec.testPatch;
    // One stream in program order: the environment interleaves stdout and stderr as they arrive,
    // so `git apply -v`'s stderr could land inside the fingerprint lines that follow it (a status
    // line parted from its file's hash: a gold patch vetoed as "written and put back").
    const script: string[] = ['exec 2>&1', check.preScript()];
    // A local repository whose touched files are all as the base commit has them (berth reads
    // them itself, paths-at-base.ts): nothing to record, discard or put back; the script skips
    // the reset (four git processes).
    const snapshot = env.kind === 'local' ? localSnapshot(context) : undefined;
    const atBase =
      paths.length > 0 && snapshot !== undefined && context.baseCommit !== undefined
        ? await traced('verifier: paths at base', () => pathsAtBase(env.workdir, snapshot, paths))
        : false;
    const resetting = paths.length > 0 && !atBase;
    if (resetting) {
      script.push(
        // What the agent changed among these paths (the record). stderr is dropped: git warns
        // about folders the test patch creates that do not exist yet ("could not open
        // directory"), and a warning is not a changed file.
        `${GIT} diff --name-only --no-renames ${q(base)} -- ${quoted} 2>/dev/null`,
        `${GIT} ls-files --others -- ${quoted} 2>/dev/null`,
        `echo ${listed}`,
        // A symlinked folder on the way to a touched path is removed first (never followed).
        ...unlinkLeadingSymlinks(paths),
        'set -e',
        // Every touched path back to the base commit (present there) or gone (absent there),
        // whatever the listing says: the reset does not rely on the index being honest.
        `rm -rf -- ${quoted}`,
        'set -o pipefail',
        `if ! ${GIT} ls-tree -r -z --name-only ${q(base)} -- ${quoted} | xargs -0 -r ${GIT} checkout -q ${q(base)} --; then`,
        ...paths.map(
          (p) =>
            `  if ${GIT} cat-file -e ${q(`${base}:${p}`)} 2>/dev/null; then rm -rf -- ${q(p)}; ${GIT} checkout -q ${q(base)} -- ${q(p)}; else rm -rf -- ${q(p)}; fi`,
        ),
        'fi',
      );
    }
    script.push(`echo ${reset}`);
    // 2. Apply the test patch (then the tamper check's fingerprint of test and runner files).
    script.push(testPatch ? `if ${GIT} apply -v -; then berth_rc=0; else berth_rc=$?; fi` : 'berth_rc=0');
    script.push(check.postApplyScript(), 'exit $berth_rc');
    const bookkeeping = await traced('verifier: bookkeeping exec', () =>
      env.exec(script.join('\n'), {
        timeoutSec: 300,
        trusted: true,
        ...(testPatch ? { input: testPatch.endsWith('\n') ? testPatch : `${testPatch}\n` } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
      }),
    );
    if (context.signal?.aborted) throw context.signal.reason ?? new Error('cancelled');
    const discarded: string[] = [];
    let rest = check.absorbBookkeeping(bookkeeping.output);
    if (resetting) {
      const [listing = '', after = ''] = rest.split(`${listed}\n`);
      rest = after;
      // Only paths the test patch touches (or files under them) are recorded.
      const isTouched = (path: string) => paths.some((p) => path === p || path.startsWith(`${p}/`));
      for (const line of listing.split('\n')) {
        const path = line.trim();
        if (path && isTouched(path) && !discarded.includes(path)) discarded.push(path);
      }
    }
    const resetDone = rest.includes(`${reset}\n`);
    const [resetLog = '', applyLog = ''] = rest.split(`${reset}\n`);
    if (!resetDone) {
      await writeFileAtomic(join(dir, 'test-patch-apply.log'), resetLog);
      return this.failed(dir, spec, `resetting the test patch's files failed: ${resetLog.slice(-500)}`, {
        discarded,
        paths,
      });
    }
    // Records are written while the verifier goes on (awaited before report.json).
    const records: Promise<void>[] = [];
    const record = (write: Promise<void>) => {
      write.catch(() => undefined);
      records.push(write);
    };
    record(
      writeFileAtomic(
        join(dir, 'test-patch-apply.log'),
        `${resetLog}${testPatch ? applyLog : '(empty test patch)\n'}`,
      ),
    );
    if (testPatch && bookkeeping.exitCode !== 0) {
      await Promise.all(records);
      return this.failed(
        dir,
        spec,
        `the test patch does not apply: ${applyLog.trim().split('\n').slice(-3).join(' | ')}`,
        { discarded, paths },
        'TestPatchApplyError',
      );
    }

    // 3. The test run's build cache, where the environment keeps one (local Go: compiled by the
    // toolchain alone before any test code runs; src/environments/local/go-cache.ts).
    const prepared = await traced('verifier: prepareTestRun', async () =>
      env.prepareTestRun?.({
        testFiles: spec.testFiles,
        ...(context.signal ? { signal: context.signal } : {}),
      }),
    );
    if (context.signal?.aborted) throw context.signal.reason ?? new Error('cancelled');
    if (prepared)
      await writeFileAtomic(join(dir, 'build-cache.json'), `${JSON.stringify(prepared, null, 2)}\n`);

    // 4. Run the tests between this run's markers (the tamper check's first fingerprint, where
    // berth takes it itself, right before).
    await traced('verifier: beforeRun', () => check.beforeRun(context.signal));
    if (context.signal?.aborted) throw context.signal.reason ?? new Error('cancelled');
    const nonce = randomBytes(16).toString('hex');
    const run = await traced('verifier: test exec', () =>
      env.exec(check.command, {
        timeoutSec: context.timeoutSec,
        network: { mode: 'no-network' },
        ...check.execOptions,
        ...(this.options.maxOutputBytes !== undefined ? { maxOutputBytes: this.options.maxOutputBytes } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
      }),
    );
    if (context.signal?.aborted) throw context.signal.reason ?? new Error('cancelled');
    // The tamper check's reads after the run go on while the log is written, parsed and graded.
    check.startAfterRun(context.signal);
    const body = run.output.endsWith('\n') || run.output === '' ? run.output : `${run.output}\n`;
    const log =
      `>>>>> berth test command: ${command}\n` +
      `>>>>> Start Test Output ${nonce}\n${body}>>>>> End Test Output ${nonce}\n` +
      `>>>>> Test Exit Code ${nonce}: ${run.exitCode ?? `killed (${run.signal ?? 'signal'})`}\n` +
      (run.timedOut ? `>>>>> Tests Timed Out ${nonce}: ${context.timeoutSec} s\n` : '');
    record(writeFileAtomic(join(dir, 'test-output.txt'), log));

    // 5. Parse.
    const slice = betweenMarkers(log, nonce) ?? '';
    const warnings: string[] = [];
    let parser: Parser | undefined;
    if (spec.parser) {
      parser = findParser(spec.parser, this.options.parsers);
      if (!parser)
        warnings.push(
          `unknown parser ${JSON.stringify(spec.parser)}; known: ${parserNames(this.options.parsers).join(', ') || 'none'}`,
        );
    } else {
      parser = detectParser(
        slice.slice(0, DETECT_HEAD_BYTES),
        this.options.parsers ? { list: this.options.parsers, minScore: 0 } : {},
      );
      if (!parser) warnings.push('no parser recognises the test output');
    }
    let parse: ParseResult | undefined;
    let usedWholeLog = false;
    let parsedText = slice;
    if (parser) {
      // Every occurrence is kept: the SWE-bench rules read a repeated id by its last line.
      const reader = parser;
      parse = await traced('verifier: parse', () =>
        reader.parse(chunksOf(slice), { sourceName: 'test-output.txt', keepElements: true }),
      );
      if (parse.tests.length === 0) {
        const whole = await parser.parse(chunksOf(log), {
          sourceName: 'test-output.txt',
          keepElements: true,
        });
        if (whole.tests.length > 0) {
          parse = whole;
          usedWholeLog = true;
          parsedText = log;
          warnings.push('the output between the markers parsed to nothing; the whole log was parsed');
        }
      }
      if (run.truncated) parse = { ...parse, truncated: true };
      warnings.push(...parse.warnings);
    }

    // 6. Grade: berth's reading and the SWE-bench harness's (a repeated id: its last line wins),
    // then the tamper checks, which refuse a pass under berth's rules.
    const gradeInput = {
      failToPass: spec.failToPass,
      passToPass: spec.passToPass,
      log: parsedText,
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      timeoutSec: context.timeoutSec,
    };
    // berth's rules map skips that pytest reported only by location (`SKIPPED [1] file:line`)
    // back to their tests from the test files; the harness's reading leaves them missing.
    const berthParse = parse
      ? await traced('verifier: mapSkipLocations', () =>
          mapSkipLocations(parse, (file) => readRepoFile(env, file, context.signal)),
        )
      : undefined;
    if (berthParse && parse && berthParse !== parse)
      warnings.push(...berthParse.warnings.slice(parse.warnings.length));
    const berthGrade = gradeSwebench({ ...gradeInput, parse: berthParse, rules: 'default' });
    const harnessRead = gradeSwebench({
      ...gradeInput,
      parse: parse ? harnessReading(parse, parsedText) : undefined,
      rules: 'swebench',
    });
    // The harness reads the whole log; a log berth cut at its cap cannot give the harness's verdict.
    const harnessGrade: SwebenchGrade = run.truncated
      ? {
          ...harnessRead,
          status: 'error',
          resolved: false,
          errorReason:
            "the test output passed berth's cap and was cut: the SWE-bench harness's verdict, which reads the whole log, cannot be reproduced",
        }
      : harnessRead;
    await traced('verifier: afterRun', () => check.afterRun(context.signal));
    if (context.signal?.aborted) throw context.signal.reason ?? new Error('cancelled');
    const tampering = check.judge({
      grades: { default: berthGrade, swebench: harnessGrade },
      ...(parser ? { parserName: parser.name } : {}),
      log: slice,
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      workdir: env.workdir,
    });
    const berthStatus =
      berthGrade.status === 'resolved' && tampering.vetoed ? 'unresolved' : berthGrade.status;
    const verdictByRules: SwebenchDetails['verdict_by_rules'] = {
      default: { status: berthStatus, resolved: berthStatus === 'resolved' },
      swebench: { status: harnessGrade.status, resolved: harnessGrade.resolved },
    };
    const rules = this.options.rules ?? 'default';
    const grade = rules === 'swebench' ? harnessGrade : berthGrade;
    const verdict = verdictByRules[rules];
    const details: SwebenchDetails = {
      status: verdict.status,
      resolved: verdict.resolved,
      ...(grade.errorReason ? { error_reason: grade.errorReason } : {}),
      FAIL_TO_PASS: grade.FAIL_TO_PASS,
      PASS_TO_PASS: grade.PASS_TO_PASS,
      discarded_agent_changes: discarded,
      test_patch_applied: true,
      test_command: command,
      exit_code: run.exitCode,
      timed_out: run.timedOut,
      output_truncated: run.truncated,
      isolated: env.isolated,
      ...(parser ? { parser: parser.name } : {}),
      used_whole_log: usedWholeLog,
      parse_warnings: warnings,
      ...(grade.dropped.length > 0 ? { dropped_expected: grade.dropped } : {}),
      duration_sec: roundSec((performance.now() - started) / 1000),
      rules,
      verdict_by_rules: verdictByRules,
      tampering,
    };
    // Verdicts in snake_case, as every file berth writes (matchedBy -> matched_by).
    const verdicts = verdictsForFile(grade.verdicts);
    await traced('verifier: records', () => Promise.all(records));
    const parsed = parse?.tests.map((t) => ({ id: t.id, status: t.status })) ?? [];
    await traced('verifier: report', () =>
      writeJsonAtomic(join(dir, 'report.json'), { ...details, tests: verdicts, parsed }),
    );
    const reason =
      grade.errorReason ?? (verdict.status === 'unresolved' ? notPassedReason(verdicts) : undefined);
    const result: VerifierResult = {
      rewards: { reward: verdict.resolved ? 1 : 0 },
      status: verdict.status,
      FAIL_TO_PASS: grade.FAIL_TO_PASS,
      PASS_TO_PASS: grade.PASS_TO_PASS,
      ...(reason ? { reason } : {}),
      notes: discardedNote(discarded),
      files: FILES,
      details: { ...details, tests: verdicts },
    };
    if (grade.status === 'error') {
      result.exception = {
        type: run.timedOut ? 'VerifierTimeoutError' : PARSE_ERROR,
        message: grade.errorReason ?? 'invalid test log',
      };
    }
    return result;
  }

  private async failed(
    dir: string,
    spec: { failToPass: string[]; passToPass: string[] },
    message: string,
    facts: { discarded: string[]; paths: string[] },
    type = PARSE_ERROR,
  ): Promise<VerifierResult> {
    await writeJsonAtomic(join(dir, 'report.json'), { status: 'error', error_reason: message, ...facts });
    return {
      rewards: { reward: 0 },
      status: 'error',
      ...nonePassed(spec),
      reason: message,
      notes: discardedNote(facts.discarded),
      files: FILES,
      details: {
        status: 'error',
        resolved: false,
        error_reason: message,
        ...nonePassed(spec),
        discarded_agent_changes: facts.discarded,
        test_patch_applied: false,
      },
      exception: { type, message },
    };
  }
}
