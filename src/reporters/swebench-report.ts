/**
 * The SWE-bench harness's final report (`swebench/harness/reporting.py:make_run_report`,
 * `schema_version: 2`), built from a berth job so tools that read the harness's
 * `<model>.<run_id>.json` read berth's `jobs/<job>/swebench-report.json` too.
 *
 * Categories, per instance (ids sorted, as the harness sorts them):
 * - `submitted_ids`: the instances run (those with a prediction for `-a predictions`);
 * - `incomplete_ids`: instances of the dataset (after -i/-x) without a prediction, not run;
 * - `empty_patch_ids`: an empty prediction (not run, neither completed nor error);
 * - `completed_ids`: the tests ran to a verdict; split into `resolved_ids` / `unresolved_ids`;
 * - `error_ids`: no verdict (berth's `error` and `patch_failed`, and, as the harness counts an
 *   instance without report.json, a trial cancelled or never started by an interrupted run).
 * With `-k` > 1 the report covers attempt 1 (the harness grades one prediction per instance)
 * and says so in `berth_attempt`.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { TrialResult } from '../trials/result.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';

const ids = z.array(z.string());
const n = z.number().int().min(0);

export const swebenchReportSchema = z
  .object({
    total_instances: n.describe('instances of the dataset after -i/-x: submitted plus incomplete'),
    submitted_instances: n.describe('instances run (with a prediction)'),
    completed_instances: n.describe('instances whose tests ran to a verdict'),
    resolved_instances: n,
    unresolved_instances: n,
    empty_patch_instances: n,
    error_instances: n.describe('instances without a verdict (error, patch failed, interrupted)'),
    completed_ids: ids,
    incomplete_ids: ids.describe('instances without a prediction (not run)'),
    empty_patch_ids: ids,
    submitted_ids: ids,
    resolved_ids: ids,
    unresolved_ids: ids,
    error_ids: ids,
    schema_version: z.literal(2),
    berth_attempt: z.number().int().min(1).optional().describe('the attempt reported, when -k > 1'),
  })
  .describe("the SWE-bench harness's final report (reporting.py, schema_version 2)");

export type SwebenchReport = z.infer<typeof swebenchReportSchema>;

/**
 * Builds the report.
 * @param trials the job's trial results (any attempts; only `attempt` is used)
 * @param submitted the instance ids run (planned), finished or not
 * @param incomplete the dataset's instance ids without a prediction
 */
export function buildSwebenchReport(
  trials: readonly TrialResult[],
  submitted: readonly string[],
  incomplete: readonly string[],
  attempts = 1,
  attempt = 1,
): SwebenchReport {
  const byInstance = new Map<string, TrialResult>();
  for (const t of trials) if (t.berth.attempt === attempt) byInstance.set(t.berth.instance_id, t);
  const sets = {
    completed: [] as string[],
    empty_patch: [] as string[],
    resolved: [] as string[],
    unresolved: [] as string[],
    error: [] as string[],
  };
  const submittedIds = [...new Set(submitted)].sort();
  for (const id of submittedIds) {
    const status = byInstance.get(id)?.berth.status;
    if (status === 'resolved' || status === 'unresolved') {
      sets.completed.push(id);
      sets[status].push(id);
    } else if (status === 'empty_patch') sets.empty_patch.push(id);
    else sets.error.push(id);
  }
  const incompleteIds = [...new Set(incomplete)].sort();
  return {
    total_instances: submittedIds.length + incompleteIds.length,
    submitted_instances: submittedIds.length,
    completed_instances: sets.completed.length,
    resolved_instances: sets.resolved.length,
    unresolved_instances: sets.unresolved.length,
    empty_patch_instances: sets.empty_patch.length,
    error_instances: sets.error.length,
    completed_ids: sets.completed,
    incomplete_ids: incompleteIds,
    empty_patch_ids: sets.empty_patch,
    submitted_ids: submittedIds,
    resolved_ids: sets.resolved,
    unresolved_ids: sets.unresolved,
    error_ids: sets.error,
    schema_version: 2,
    ...(attempts > 1 ? { berth_attempt: attempt } : {}),
  };
}

/** Writes the report to `<jobDir>/swebench-report.json` (atomically). */
export async function writeSwebenchReport(jobDir: string, report: SwebenchReport): Promise<string> {
  const file = join(jobDir, 'swebench-report.json');
  await writeJsonAtomic(file, report);
  return file;
}
