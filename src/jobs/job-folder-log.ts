/**
 * When the variable `BERTH_JOB_FOLDERS_LOG` names a file, every job folder berth writes is
 * appended to it, one absolute path a line. berth's test suite sets it and checks every job
 * folder a test wrote against Harbor's models (test/helpers/harbor-job-check.setup.ts); a CI
 * script can use it to find what a run wrote.
 */
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The variable naming the log of job folders. */
export const JOB_FOLDERS_LOG_VARIABLE = 'BERTH_JOB_FOLDERS_LOG';

/** Appends a job folder to the log when one is asked for; never fails the job. */
export function noteJobFolder(jobDir: string): void {
  const file = process.env[JOB_FOLDERS_LOG_VARIABLE];
  if (!file) return;
  try {
    appendFileSync(file, `${resolve(jobDir)}\n`);
  } catch {}
}
