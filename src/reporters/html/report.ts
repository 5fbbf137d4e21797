/**
 * `jobs/<job>/report.html`: one self-contained page with the job's summary, charts and every
 * trial, each with its own page (instruction, trajectory, patch, tests, rewards, exception,
 * logs). Written at the end of every `berth run` and by `berth report JOB --html`.
 */
import { join } from 'node:path';
import PQueue from 'p-queue';
import type { JobRecord, TrialDetails } from '../../results/model.ts';
import { readJob } from '../../results/read-job.ts';
import { type JobSummary, summarize } from '../../results/summary.ts';
import { type DetailLimits, readTrialDetails, reportLimitsFor } from '../../results/trial-details.ts';
import { writeFileAtomic } from '../../util/atomic-write.ts';
import { type ChartSpec, jobCharts } from './charts.ts';
import { renderPage, scriptJson } from './page.ts';

/** What a job page draws: the job, its summary and its charts. */
export interface JobPageData {
  job: JobRecord;
  summary: JobSummary;
  charts: ChartSpec[];
  /** Trial name → number of its `berth-trial-<n>` block (report files only). */
  details?: Record<string, number>;
}

/** The data of a job page from a job read with `readJob`. */
export function jobPageData(job: JobRecord): JobPageData {
  const summary = summarize(job.trials);
  return { job, summary, charts: jobCharts(job.trials, summary) };
}

/** The file name of the report inside a job folder. */
export const REPORT_FILE = 'report.html';

/**
 * Builds the report of a job folder.
 * @param given how much of each trial's files the page carries (default: by the number of trials).
 */
export async function renderJobReport(jobDir: string, given?: DetailLimits): Promise<string> {
  const job = await readJob(jobDir);
  const limits = given ?? reportLimitsFor(job.trials.length);
  const data = jobPageData(job);
  const queue = new PQueue({ concurrency: 8 });
  const details: Array<TrialDetails | undefined> = await Promise.all(
    job.trials.map((trial) =>
      queue.add(() =>
        trial.outcome === 'pending'
          ? Promise.resolve(undefined)
          : // A trial that cannot be read (a berth bug, a folder changing under us) leaves its page
            // empty with a warning; the rest of the report is still written.
            readTrialDetails(job.dir, trial.name, limits).catch((error: Error) => {
              job.warnings.push(`trial ${trial.name}: its page could not be read (${error.message})`);
              return undefined;
            }),
      ),
    ),
  );
  const index: Record<string, number> = {};
  const blocks: Array<[string, string]> = [];
  details.forEach((detail, n) => {
    if (!detail) return;
    index[detail.name] = n;
    blocks.push([`berth-trial-${n}`, scriptJson(detail)]);
  });
  return renderPage({
    title: `berth: job ${job.name}`,
    kind: 'job',
    source: 'inline',
    data: { ...data, details: index },
    blocks,
  });
}

/**
 * Writes `<jobDir>/report.html` (atomically) and returns its path.
 * @throws InputError when `jobDir` is not a job folder.
 */
export async function writeJobReport(jobDir: string, limits?: DetailLimits): Promise<string> {
  const html = await renderJobReport(jobDir, limits);
  const path = join(jobDir, REPORT_FILE);
  await writeFileAtomic(path, html);
  return path;
}
