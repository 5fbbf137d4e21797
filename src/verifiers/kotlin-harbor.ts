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
 *    `test_sh_rewards` / `test_sh_exception` for comparison;
 * 4. when the two rewards differ, `reference_disagreement` records both and
 *    the reason (`kotlinDisagreement`), and the trial's note says so: test.sh
 *    is the dataset's own grading pipeline, whose verdict users compare with.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { logsPath } from '../environments/environment.ts';
import {
  collectReports,
  gradeKotlin,
  inspectReport,
  type KotlinDisagreement,
  kotlinDisagreement,
  readKotlinExpected,
} from '../grading/kotlin-benchmark.ts';
import { verdictsForFile } from '../trials/file-format.ts';
import { shellQuote } from '../util/shell.ts';
import type { Verifier, VerifierResult, VerifyContext } from './verifier.ts';

/** The `find` expression matching Gradle reports outside /proc, /sys, /dev and /logs. */
const FIND_REPORTS =
  "find / \\( -path /proc -o -path /sys -o -path /dev -o -path /logs \\) -prune -o -type f -path '*/build/test-results/*' -name 'TEST*.xml'";

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
  const stale = await environment.exec(`${FIND_REPORTS} -print -exec rm -f {} + | wc -l`, {
    user: 'root',
    cwd: '/',
    timeoutSec: 120,
  });
  const deleted = Number(/(\d+)\s*$/.exec(stale.output.trim())?.[1] ?? 0);
  const verdict = await inner.verify(context);
  const details: Record<string, unknown> = { ...(verdict.details ?? {}), stale_reports_deleted: deleted };
  details.test_sh_rewards = verdict.rewards;
  if (verdict.exception) details.test_sh_exception = verdict.exception;
  // A timeout or a verifier that could not even start: no verdict from berth either.
  if (verdict.exception && ['VerifierTimeoutError', 'AddTestsDirError'].includes(verdict.exception.type))
    return { rewards: { reward: 0 }, details, exception: verdict.exception };

  const reportsDir = `${logsPath(environment, 'verifier')}/junit-reports`;
  const reports = shellQuote(reportsDir);
  const copy = await environment.exec(
    `rm -rf ${reports} && mkdir -p ${reports} && ${FIND_REPORTS} -exec cp --parents {} ${reports}/ \\; ; chmod -R a+rX ${reports}`,
    { user: 'root', cwd: '/', timeoutSec: 300 },
  );
  // Copied out as data (regular files only, never a link).
  const hostReports = join(context.trialDir, 'verifier', 'junit-reports');
  await environment.download(reportsDir, hostReports);
  const files = await collectReports(hostReports);
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
  const referenceReward =
    typeof verdict.rewards?.reward === 'number' && !verdict.exception ? verdict.rewards.reward : undefined;
  const disagreement = kotlinDisagreement({
    referenceReward,
    report,
    files: await Promise.all(files.map(inspectReport)),
    testShOutput: await readCapped(join(context.trialDir, 'verifier', 'test-stdout.txt')),
  });
  if (disagreement) details.reference_disagreement = disagreement;
  const status = report.resolved ? 'resolved' : 'unresolved';
  details.status = status;
  const note = disagreementNote(details);
  return { rewards: { reward: report.reward }, status, details, ...(note ? { notes: [note] } : {}) };
}

/** The trial note for a recorded disagreement with the dataset's own grading, if any. */
export function disagreementNote(details: Record<string, unknown> | null | undefined): string | undefined {
  const d = details?.reference_disagreement as KotlinDisagreement | undefined;
  if (!d || typeof d.reason !== 'string') return undefined;
  return `the dataset's test.sh says reward ${d.reference_reward ?? 'none'}, berth ${d.berth_reward}: ${d.reason}`;
}

/**
 * The first and last 64 KiB of a file test.sh wrote (untrusted): never through a symbolic
 * link, only a regular file; '' when absent.
 */
async function readCapped(file: string, bytes = 64 * 1024): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile()) return '';
    if (info.size <= 2 * bytes) {
      const all = Buffer.alloc(info.size);
      await handle.read(all, 0, all.length, 0);
      return all.toString('utf8');
    }
    const head = Buffer.alloc(bytes);
    await handle.read(head, 0, bytes, 0);
    const tail = Buffer.alloc(bytes);
    await handle.read(tail, 0, bytes, info.size - bytes);
    return `${head.toString('utf8')}\n...\n${tail.toString('utf8')}`;
  } catch {
    return '';
  } finally {
    await handle?.close();
  }
}
