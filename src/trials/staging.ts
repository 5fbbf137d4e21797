/**
 * Harbor's log folders (`agent/`, `verifier/`, `artifacts/`) as staging folders.
 *
 * Untrusted code (the agent, its set-up, solve.sh, the task's tests and the code they
 * run) writes them *inside the environment* (`/logs/...` in a container, the local
 * environment's `logs/`); no folder of the trial on the host is ever bound or mounted
 * where it runs. After a phase berth copies the folder into the trial folder as data
 * (regular files and folders only, capped; links and special files recorded, never
 * followed: `Environment.download`, src/util/safe-fs.ts), and between steps of a
 * multi-step task empties it, as Harbor's moved host folder does. Everything berth
 * itself writes in the trial folder (return codes, the prediction, the patch, rewards
 * of verifiers that write none) therefore lands in a folder no untrusted code can reach.
 */
import { join } from 'node:path';
import { type Environment, type LogFolder, logsPath } from '../environments/environment.ts';
import { type CopyLimits, type CopyReport, describeSkipped } from '../util/safe-fs.ts';
import { shellQuote } from '../util/shell.ts';
import type { TrialResult } from './result.ts';

/**
 * Copies the environment's `folder` into `<trialDir>/<folder>` (names berth already wrote
 * there are kept) and records in `result` what was left out. Never throws: a folder that
 * cannot be copied (a stopped environment, a missing folder) is recorded in the note.
 */
export async function collectLogFolder(
  environment: Environment,
  folder: LogFolder,
  trialDir: string,
  result?: TrialResult,
  limits?: CopyLimits,
): Promise<CopyReport | undefined> {
  let report: CopyReport;
  try {
    report = await environment.download(logsPath(environment, folder), join(trialDir, folder), limits);
  } catch {
    return undefined;
  }
  if (result && report.skippedCount > 0) recordNotCopied(result, folder, report);
  return report;
}

/**
 * Records a copy's left-out entries under `berth.not_copied[folder]` (appended); names
 * kept because berth had already written them are not listed.
 */
export function recordNotCopied(result: TrialResult, folder: LogFolder, report: CopyReport): void {
  const skipped = report.skipped.filter((s) => s.reason !== 'exists');
  const unlisted = report.skippedCount - report.skipped.length;
  if (skipped.length === 0 && unlisted === 0) return;
  const facts = result.berth;
  facts.not_copied ??= {};
  facts.not_copied[folder] = [
    ...(facts.not_copied[folder] ?? []),
    ...describeSkipped({ ...report, skipped, skippedCount: skipped.length + unlisted }),
  ];
}

/** Empties the environment's `folder` (removed and made again, mode 777): a link in its place goes too. */
export async function resetLogFolder(environment: Environment, folder: LogFolder): Promise<void> {
  const path = shellQuote(logsPath(environment, folder));
  await environment.exec(`rm -rf ${path} && mkdir -p ${path} && chmod 777 ${path}`, {
    user: 'root',
    cwd: '/',
    timeoutSec: 60,
  });
}
