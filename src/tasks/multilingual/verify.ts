/**
 * The multilingual demo's verifier (seed "Evaluation Pipeline", steps 3-7),
 * run in any `Environment` whose workdir is the task's git repository.
 *
 * Where it runs: never where an agent acted (`gradesInFreshEnvironment`). An agent that acted
 * in its environment (`command`, deckhand, installed agents) is graded in a fresh environment of
 * the task that received only its work as a diff, taken without running anything of the agent's
 * (src/trials/agent-work.ts): no hook, fsmonitor, filter, object or cache of the agent's reaches
 * these steps (trust10: `multilingual-go-git-hook-forge`, `multilingual-go-forged-base-object`).
 * An agent that returns a patch (oracle, predictions) had its patch applied by the engine, and
 * no code of it ran. Then:
 *
 * 1. the agent's work is taken as one diff against `base_commit` (new files
 *    included), kept as `verifier/agent.diff`;
 * 2. it is split into `code_changes.diff` and `test_changes.diff` by the rule
 *    in split.ts; test files the agent changed, and every file the test patch
 *    touches, are reset to the base (deleted when the base lacks them), which
 *    leaves exactly the code changes in place. Code changes that configure or extend the test
 *    runner are no code changes: the patch layer of the SWE-bench tamper checks
 *    (src/verifiers/tampering/patch-scan.ts: `pytest.ini`, the pytest sections of
 *    `pyproject.toml`, `setup.cfg` and `tox.ini`, jest/mocha/vitest configuration, `.npmrc`,
 *    test settings in `package.json`, `*.pth`, `sitecustomize.py`, a module shadowing pytest...)
 *    finds them, and the trial fails closed before any test runs: reward 0, not resolved,
 *    reason `tampering` (`berth.tampering`), as berth's default rules refuse such a patch on a
 *    SWE-bench row (trust12, `multilingual-pytest-ini-plugin`: `addopts = -p <module of the
 *    patch>` loaded a plugin that turned every failed test into a pass). A `conftest.py` is a test
 *    file by its name (discarded, as above);
 * 3. the task's test patch is applied (`git apply`), and the test run gets a build cache no
 *    agent wrote (`Environment.prepareTestRun`: locally the commands share one GOCACHE);
 * 4. the test command runs between two lines carrying a random nonce, with a
 *    timeout; only the output between the markers is parsed, so nothing the
 *    agent prints before can count, and a log without the end marker is
 *    flagged as truncated;
 * 5. the log is parsed by the parser `tests/config.json` names and graded:
 *    reward 1 only when every f2p and p2p test PASSED.
 *
 * Failures are outcomes, never crashes: a test patch that does not apply, a
 * missing parser, a log with no tests or a diff that names a path whose bytes are not UTF-8
 * (`UndecodablePathError`: berth could not reset that file) gives reward 0 with a named exception.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../../environments/environment.ts';
import { chunksOf } from '../../parsers/common.ts';
import { findParser } from '../../parsers/registry.ts';
import { writeFileAtomic } from '../../util/atomic-write.ts';
import { UndecodablePathError } from '../../util/patch-files.ts';
import { shellQuote } from '../../util/shell.ts';
import {
  configTextScript,
  readConfigTexts,
  scanPatch,
  sectionedConfigsIn,
} from '../../verifiers/tampering/patch-scan.ts';
import type { TamperRecord } from '../../verifiers/tampering/types.ts';
import type { Verifier, VerifierResult, VerifyContext } from '../../verifiers/verifier.ts';
import type { VerifierSpec } from '../task.ts';
import { gradeMultilingual } from './grade.ts';
import { diffPaths, splitDiff } from './split.ts';

type MultilingualSpec = Extract<VerifierSpec, { kind: 'multilingual' }>;

/** git without hooks or fsmonitor (defence in depth: no agent wrote this repository's settings). */
const GIT = 'git -c core.hooksPath=/dev/null -c core.fsmonitor=false';

export class MultilingualVerifier implements Verifier {
  readonly kind = 'multilingual' as const;
  /** The agent's work is the diff against the commit it started from. */
  readonly needsBaseCommit = true;
  /** An agent that acted in its environment is graded in a fresh one, on its diff alone. */
  readonly gradesInFreshEnvironment = true;

  /**
   * The base is the commit the environment made of the task's repository (a local folder:
   * berth's own commit of the same files), else HEAD before the agent ran, which must be the
   * `base_commit` of sample_task.json (the task's Dockerfile reproduces it).
   */
  async verify(context: VerifyContext): Promise<VerifierResult> {
    const spec = context.task.verifier;
    if (spec.kind !== 'multilingual') throw new Error(`MultilingualVerifier got a ${spec.kind} task`);
    const dir = join(context.trialDir, 'verifier');
    const base = context.baseCommit ?? spec.baseCommit;
    if (context.environment.baseCommit === undefined && base !== spec.baseCommit) {
      const result: VerifierResult = {
        rewards: { reward: 0 },
        exception: {
          type: 'BaseCommitMismatchError',
          message: `the repository is at ${base}, sample_task.json says ${spec.baseCommit}`,
        },
      };
      await mkdir(dir, { recursive: true });
      await writeFileAtomic(join(dir, 'report.json'), `${JSON.stringify(result, null, 2)}\n`);
      return result;
    }
    return runMultilingualVerification(
      context.environment,
      spec,
      dir,
      context.timeoutSec ?? spec.timeoutSec,
      base,
      // A patch was applied here (an agent's, or its work carried into this fresh environment):
      // no command of the agent ran here. Without one, the agent acted here (a multi-step task).
      context.agentResult.patch === undefined,
    );
  }
}

/** The steps above; `dir` is the host folder that receives the logs and `report.json`. */
export async function runMultilingualVerification(
  env: Environment,
  spec: MultilingualSpec,
  dir: string,
  timeoutSec: number,
  base = spec.baseCommit,
  agentActed = true,
): Promise<VerifierResult> {
  const fail = async (type: string, message: string, details: Record<string, unknown> = {}) => {
    const result: VerifierResult = { rewards: { reward: 0 }, exception: { type, message }, details };
    await writeFileAtomic(join(dir, 'report.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  };
  await mkdir(dir, { recursive: true });

  // 1. The agent's work as one diff (untracked files included).
  const diffRun = await env.exec(
    `${GIT} add -A && ${GIT} -c core.quotepath=true diff --cached --binary --no-renames --no-color --no-ext-diff --no-textconv ${shellQuote(base)}`,
    { timeoutSec: 120, maxOutputBytes: 256 * 1024 * 1024 },
  );
  if (diffRun.exitCode !== 0)
    return fail('AgentDiffError', `cannot diff against ${base}: ${diffRun.output.slice(-2000)}`);
  const agentDiff = diffRun.output;
  await writeFile(join(dir, 'agent.diff'), agentDiff);

  // 2. Split; reset test files and everything the test patch touches. A path berth cannot name
  // (not UTF-8) could be neither reset nor checked: the diff is refused.
  let testPatchPaths: string[];
  let split: ReturnType<typeof splitDiff>;
  try {
    testPatchPaths = diffPaths(spec.testPatch);
    split = splitDiff(agentDiff, testPatchPaths);
  } catch (error) {
    if (error instanceof UndecodablePathError) return fail(error.name, error.message);
    throw error;
  }
  await writeFile(join(dir, 'code_changes.diff'), split.codeDiff);
  await writeFile(join(dir, 'test_changes.diff'), split.testDiff);

  // Test-runner settings and plugin files among the code changes: the trial fails closed. But
  // JavaScript runner settings a real fix may change too (package.json scripts, jest or vite
  // configuration) are reset to the base with the test files, and the tests run without them:
  // recorded without a veto (an honest fix that needed them fails its tests; trust19).
  const found = await runnerChanges(env, split.codeDiff);
  const runner = found.filter((f) => f.veto);
  const discardedRunner = found.filter((f) => !f.veto);
  const details: Record<string, unknown> = {
    ...splitDetails(split),
    ...(discardedRunner.length > 0
      ? { tampering: { vetoed: false, findings: discardedRunner, notes: [] } satisfies TamperRecord }
      : {}),
  };
  if (runner.length > 0) {
    const tampering: TamperRecord = { vetoed: true, findings: [...runner, ...discardedRunner], notes: [] };
    const paths = [...new Set(runner.flatMap((finding) => finding.paths ?? []))];
    const result: VerifierResult = {
      rewards: { reward: 0 },
      status: 'unresolved',
      reason: `tampering: the code changes configure or extend the test runner (${paths.join(', ')}); no test ran`,
      details: { ...details, tampering },
    };
    await writeFileAtomic(join(dir, 'report.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  }
  const reset = [
    ...new Set([
      ...split.test.flatMap((file) => [file.oldPath, file.newPath]),
      ...testPatchPaths,
      ...discardedRunner.flatMap((f) => f.paths ?? []),
    ]),
  ];
  if (reset.length > 0) {
    const script = reset
      .map(
        (path) =>
          `if ${GIT} cat-file -e ${shellQuote(`${base}:${path}`)} 2>/dev/null; then ${GIT} checkout -q ${shellQuote(base)} -- ${shellQuote(path)}; else rm -rf -- ${shellQuote(path)}; fi`,
      )
      .join('\n');
    const resetRun = await env.exec(`set -e\n${GIT} reset -q\n${script}`, { timeoutSec: 120 });
    if (resetRun.exitCode !== 0) return fail('TestResetError', resetRun.output.slice(-2000));
  }

  // 3. The task's test patch.
  const patchFile = join(dir, 'test_patch.diff');
  await writeFile(patchFile, spec.testPatch);
  await env.upload(patchFile, `${env.workdir}/.git/berth_test_patch.diff`);
  const apply = await env.exec(`${GIT} apply --whitespace=nowarn .git/berth_test_patch.diff`, {
    timeoutSec: 120,
  });
  if (apply.exitCode !== 0) {
    return fail(
      'TestPatchApplyError',
      `the test patch does not apply: ${apply.output.slice(-2000)}`,
      details,
    );
  }

  // The test run's build cache: none the agent wrote (local Go: a shared cache compiled by the
  // toolchain alone, else, where the agent acted here, an empty one; src/environments/local/local.ts).
  const prepared = await env.prepareTestRun?.({ testFiles: testPatchPaths, agentActed });
  if (prepared) await writeFile(join(dir, 'build-cache.json'), `${JSON.stringify(prepared, null, 2)}\n`);

  // 4. The tests, between nonce markers.
  const nonce = randomBytes(12).toString('hex');
  const begin = `BERTH-TESTS-BEGIN-${nonce}`;
  const end = `BERTH-TESTS-END-${nonce}`;
  const logFile = join(dir, 'test-stdout.txt');
  const run = await env.exec(`echo ${begin}\n( ${spec.testCommand}\n)\necho "${end} exit=$?"`, {
    timeoutSec,
    // Environments that can (Docker) run the tests without network; the local stand-in cannot.
    network: { mode: 'no-network' },
    outputFile: logFile,
    maxOutputBytes: 64 * 1024 * 1024,
  });
  const startAt = run.output.indexOf(`${begin}\n`);
  const endMatch = new RegExp(`${end} exit=(\\d+)`).exec(run.output);
  const testExit = endMatch ? Number(endMatch[1]) : null;
  const log =
    startAt >= 0
      ? run.output.slice(startAt + begin.length + 1, endMatch ? endMatch.index : undefined)
      : run.output;
  const truncated = run.truncated || run.timedOut || !endMatch;

  // 5. Parse and grade.
  const parser = findParser(spec.parser);
  if (!parser) return fail('UnknownLogParserError', `no parser named ${spec.parser} is registered`, details);
  const parsed = await parser.parse(chunksOf(log), { sourceName: logFile });
  if (truncated) parsed.truncated = true;
  if (parsed.tests.length === 0) {
    return fail(
      'VerifierOutputParseError',
      `the ${parser.name} parser found no test in the log (exit ${testExit})`,
      {
        ...details,
        timedOut: run.timedOut,
        warnings: parsed.warnings,
      },
    );
  }
  const grade = gradeMultilingual(parsed, {
    f2p: spec.failToPass,
    p2p: spec.passToPass,
    p2f: spec.passToFail,
    f2f: spec.failToFail,
  });
  const result: VerifierResult = {
    rewards: { reward: grade.reward },
    details: {
      resolved: grade.resolved,
      parser: parser.name,
      counts: grade.counts,
      parsed_counts: parsed.counts,
      verdicts: grade.verdicts,
      test_exit_code: testExit,
      timed_out: run.timedOut,
      truncated: parsed.truncated,
      warnings: parsed.warnings,
      ...details,
    },
  };
  if (run.timedOut)
    result.exception = { type: 'VerifierTimeoutError', message: `tests exceeded ${timeoutSec}s` };
  await writeFileAtomic(join(dir, 'report.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/**
 * What the patch layer of the tamper checks (src/verifiers/tampering/patch-scan.ts) finds in the
 * code changes: runner configuration, plugin and shadow files, JavaScript runner settings without
 * a veto (reset to the base: `resetJsRunnerConfig`). The pytest settings files they change are
 * read as the diff left them (in `env`, before any reset), so that a change to a key a fix may
 * change (`markers`, `filterwarnings`, `minversion`) or outside pytest's sections is no finding.
 */
async function runnerChanges(env: Environment, codeDiff: string) {
  const configs = sectionedConfigsIn(codeDiff);
  let texts: Record<string, string> = {};
  if (configs.length > 0) {
    const mark = `@@berth-configs-${randomBytes(8).toString('hex')}@@`;
    const read = await env.exec(configTextScript(configs, mark), { timeoutSec: 120 });
    texts = readConfigTexts(read.output, configs, mark).texts;
  }
  return scanPatch(codeDiff, texts, undefined, { resetJsRunnerConfig: true });
}

function splitDetails(split: ReturnType<typeof splitDiff>): Record<string, unknown> {
  return {
    code_files: split.code.map((file) => file.newPath),
    discarded_test_files: split.test.map((file) => ({ path: file.newPath, reason: file.reason })),
  };
}
