/**
 * Kotlin Benchmark tasks graded by berth itself. When a Harbor task's tests
 * hold `expected_tests.json`, the Harbor verifier runs `test.sh` as usual, but
 * the reward is berth's verdict on the JUnit XML the build left in the
 * container (`**\/build/test-results/**\/TEST*.xml`, see
 * src/grading/kotlin-benchmark.ts), not what test.sh wrote:
 *
 * 1. before test.sh, processes the agent left are killed and every such report
 *    in the container is deleted (stale or planted reports never count);
 * 2. after test.sh, the reports are copied to `<trial>/verifier/junit-reports/`
 *    (keeping their container paths) and graded with `gradeKotlin`;
 * 3. reward = berth's verdict (0 when no report was written or one is
 *    unreadable: never the exit-code fallback of older test scripts); the
 *    reward test.sh wrote (or its error) is kept beside it in the details as
 *    `test_sh_rewards` / `test_sh_exception` for comparison.
 */
import { join } from 'node:path';
import { type Environment, logsPath } from '../environments/environment.ts';
import { collectReports, gradeKotlin, readKotlinExpected } from '../grading/kotlin-benchmark.ts';
import { verdictsForFile } from '../trials/file-format.ts';
import { shellQuote } from '../util/shell.ts';
import type { Verifier, VerifierResult, VerifyContext } from './verifier.ts';

/** The `find` expression matching Gradle reports outside /proc, /sys, /dev and /logs. */
const FIND_REPORTS =
  "find / \\( -path /proc -o -path /sys -o -path /dev -o -path /logs \\) -prune -o -type f -path '*/build/test-results/*' -name 'TEST*.xml'";

interface ProcessControl {
  baselineProcesses: Set<number>;
  killScript(keep: Set<number>): string;
}

function killerOf(env: Environment): string {
  const e = env as Partial<ProcessControl>;
  return typeof e.killScript === 'function' && e.baselineProcesses instanceof Set
    ? `${e.killScript(e.baselineProcesses)}; `
    : '';
}

/**
 * Runs `inner` (the Harbor verifier) and grades the JUnit reports against `expectedFile`.
 * Never throws for a bad report: reward 0 with the reason in `details.berth_grade.error`.
 */
export async function verifyKotlinHarbor(
  inner: Verifier,
  context: VerifyContext,
  expectedFile: string,
): Promise<VerifierResult> {
  const { environment } = context;
  const stale = await environment.exec(
    `${killerOf(environment)}${FIND_REPORTS} -print -exec rm -f {} + | wc -l`,
    {
      user: 'root',
      cwd: '/',
      timeoutSec: 120,
    },
  );
  const deleted = Number(/(\d+)\s*$/.exec(stale.output.trim())?.[1] ?? 0);
  const verdict = await inner.verify(context);
  const details: Record<string, unknown> = { ...(verdict.details ?? {}), stale_reports_deleted: deleted };
  details.test_sh_rewards = verdict.rewards;
  if (verdict.exception) details.test_sh_exception = verdict.exception;
  // A timeout or a verifier that could not even start: no verdict from berth either.
  if (verdict.exception && ['VerifierTimeoutError', 'AddTestsDirError'].includes(verdict.exception.type))
    return { rewards: { reward: 0 }, details, exception: verdict.exception };

  const reports = shellQuote(`${logsPath(environment, 'verifier')}/junit-reports`);
  const copy = await environment.exec(
    `rm -rf ${reports} && mkdir -p ${reports} && ${FIND_REPORTS} -exec cp --parents {} ${reports}/ \\; ; chmod -R a+rX ${reports}`,
    { user: 'root', cwd: '/', timeoutSec: 300 },
  );
  // Copied out as data (regular files only, never a link).
  await environment.download(
    `${logsPath(environment, 'verifier')}/junit-reports`,
    join(context.trialDir, 'verifier', 'junit-reports'),
  );
  const files = await collectReports(join(context.trialDir, 'verifier', 'junit-reports'));
  const expected = await readKotlinExpected(expectedFile);
  const report = await gradeKotlin(expected, files, { expectedName: 'expected_tests.json' });
  details.berth_grade = {
    rules: report.rules,
    resolved: report.resolved,
    reward: report.reward,
    valid: report.valid,
    ...(report.invalidReason ? { invalid_reason: report.invalidReason } : {}),
    ...(report.error ? { error: report.error } : {}),
    categories: report.categories,
    reports: files.length,
    failing: verdictsForFile(report.verdicts.filter((v) => !v.passed).slice(0, 50)),
    warnings: report.warnings,
  };
  if (copy.exitCode !== 0) details.report_copy_output = copy.output.slice(0, 2000);
  details.status = report.resolved ? 'resolved' : 'unresolved';
  return { rewards: { reward: report.reward }, details };
}
