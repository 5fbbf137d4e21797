/**
 * `berth run --json`: one JSON document on stdout. Its JSON Schema is
 * generated from `runReportSchema` into docs/run-report.schema.json.
 */
import { z } from 'zod';
import type { JobSummary } from '../jobs/job.ts';
import type { TrialResult } from '../trials/result.ts';
import { VERSION } from '../version.ts';

const count = z.object({ passed: z.number().int().min(0), total: z.number().int().min(0) });

export const trialStatusSchema = z.enum([
  'resolved',
  'unresolved',
  'error',
  'empty_patch',
  'patch_failed',
  'cancelled',
]);

export const runReportTrialSchema = z.object({
  instance_id: z.string().describe('SWE-bench instance_id (the task name)'),
  attempt: z.number().int().min(1).describe('1-based attempt (-k)'),
  trial_name: z.string().describe('folder of the trial under the job folder'),
  status: trialStatusSchema,
  resolved: z.boolean(),
  reward: z.number().describe('verifier_result.rewards.reward (0 when there is none)'),
  FAIL_TO_PASS: count.nullable().describe('FAIL_TO_PASS tests passed / expected'),
  PASS_TO_PASS: count.nullable().describe('PASS_TO_PASS tests passed / expected'),
  patch_apply_method: z.string().nullable().describe('git apply, git apply --3way or patch --fuzz=5'),
  exception_type: z.string().nullable().describe("Harbor's exception_info.exception_type"),
  isolated: z.boolean().describe('whether untrusted commands ran without network'),
  note: z.string(),
  duration_sec: z.number(),
});

export const runReportSchema = z
  .object({
    schema_version: z.literal(1),
    berth_version: z.string(),
    job_name: z.string(),
    job_dir: z.string(),
    dataset: z.string(),
    agent: z.string(),
    resolved: z.number().int().min(0).describe('trials resolved'),
    total: z.number().int().min(0).describe('trials planned'),
    resolved_rate: z.number().min(0).max(1).describe('resolved / total (0 when total is 0)'),
    cancelled: z.boolean().describe('true when stopped by Ctrl-C before every trial finished'),
    duration_sec: z.number(),
    counts: z.object({
      resolved: z.number().int(),
      unresolved: z.number().int(),
      error: z.number().int(),
      empty_patch: z.number().int(),
      patch_failed: z.number().int(),
      cancelled: z.number().int(),
      not_run: z.number().int().describe('planned trials that never started'),
    }),
    trials: z.array(runReportTrialSchema),
  })
  .describe('berth run --json output');

export type RunReport = z.infer<typeof runReportSchema>;

/** The JSON Schema of the `--json` document (draft 2020-12). */
export function runReportJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(runReportSchema) as Record<string, unknown>;
}

/** One trial as the report shows it. */
export function reportTrial(result: TrialResult): z.infer<typeof runReportTrialSchema> {
  return {
    instance_id: result.berth.instance_id,
    attempt: result.berth.attempt,
    trial_name: result.trial_name,
    status: result.berth.status,
    resolved: result.berth.resolved,
    reward: result.verifier_result?.rewards?.reward ?? 0,
    FAIL_TO_PASS: result.berth.FAIL_TO_PASS,
    PASS_TO_PASS: result.berth.PASS_TO_PASS,
    patch_apply_method: result.berth.patch_apply?.method ?? null,
    exception_type: result.exception_info?.exception_type ?? null,
    isolated: result.berth.isolated,
    note: result.berth.note,
    duration_sec: Math.round(result.berth.duration_sec * 1000) / 1000,
  };
}

/** Builds the `--json` document of a finished (or stopped) job. */
export function buildRunReport(summary: JobSummary, meta: { dataset: string; agent: string }): RunReport {
  const trials = summary.trials.map(reportTrial);
  const by = (s: string) => trials.filter((t) => t.status === s).length;
  return {
    schema_version: 1,
    berth_version: VERSION,
    job_name: summary.job_name,
    job_dir: summary.job_dir,
    dataset: meta.dataset,
    agent: meta.agent,
    resolved: summary.resolved,
    total: summary.total,
    resolved_rate: summary.total === 0 ? 0 : summary.resolved / summary.total,
    cancelled: summary.cancelled,
    duration_sec: Math.round(summary.duration_sec * 1000) / 1000,
    counts: {
      resolved: by('resolved'),
      unresolved: by('unresolved'),
      error: by('error'),
      empty_patch: by('empty_patch'),
      patch_failed: by('patch_failed'),
      cancelled: by('cancelled'),
      not_run: summary.total - trials.length,
    },
    trials,
  };
}
