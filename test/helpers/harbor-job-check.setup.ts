/**
 * After each test, every job folder it wrote (berth notes each in the file `BERTH_JOB_FOLDERS_LOG`
 * names, src/jobs/job-folder-log.ts; child processes inherit the variable) is checked against
 * Harbor's models (harbor-job-check.ts): a job folder Harbor's tools could not read fails the
 * test that wrote it. A folder removed by then, or one a test marked with `notHarborJobFolder`,
 * is not checked. Set `BERTH_SKIP_HARBOR_CHECK=1` to turn the check off (never in CI).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { JOB_FOLDERS_LOG_VARIABLE } from '../../src/jobs/job-folder-log.ts';
import { exemptJobFolders, harborJobFolderProblems } from './harbor-job-check.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-job-folders-'));
const log = join(dir, 'job-folders.txt');
process.env[JOB_FOLDERS_LOG_VARIABLE] = log;
let read = 0;

afterEach(() => {
  if (process.env.BERTH_SKIP_HARBOR_CHECK === '1' || !existsSync(log)) return;
  const text = readFileSync(log, 'utf8');
  const folders = [...new Set(text.slice(read).split('\n').filter(Boolean))];
  read = text.length;
  const problems = folders
    .filter((folder) => existsSync(folder) && !exemptJobFolders.has(folder))
    .flatMap((folder) => harborJobFolderProblems(folder).map((problem) => `${folder}: ${problem}`));
  if (problems.length > 0)
    throw new Error(
      `job folder(s) this test wrote are not what Harbor's models read (test/helpers/harbor-job-check.ts):\n  ${problems.slice(0, 30).join('\n  ')}`,
    );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));
