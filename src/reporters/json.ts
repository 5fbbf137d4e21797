/**
 * `berth run --json`: one JSON document on stdout. Its JSON Schema is
 * generated from `runReportSchema` into docs/run-report.schema.json.
 */
import { z } from 'zod';
import type { JobSummary } from '../jobs/job.ts';
import type { TrialResult } from '../trials/result.ts';
import { TRIAL_STATUSES } from '../trials/result.ts';
import { VERSION } from '../version.ts';
import type { RunScope } from './reporter.ts';
import { type SwebenchReport, swebenchReportSchema } from './swebench-report.ts';
import { summaryCounts, testsRan } from './text.ts';

const count = z.object({ passed: z.number().int().min(0), total: z.number().int().min(0) });

export const trialStatusSchema = z.enum(TRIAL_STATUSES);

export const runReportTrialSchema = z.object({
  instance_id: z.string().describe('SWE-bench instance_id (the task name)'),
  attempt: z.number().int().min(1).describe('1-based attempt (-k)'),
  trial_name: z.string().describe('folder of the trial under the job folder'),
  status: trialStatusSchema,
  resolved: z.boolean(),
  reward: z.number().describe('verifier_result.rewards.reward (0 when there is none)'),
  tests_ran: z
    .boolean()
    .describe(
      'whether the tests ran: false for empty_patch, patch_failed, cancelled and errors before the verifier started',
    ),
  FAIL_TO_PASS: count
    .nullable()
    .describe('FAIL_TO_PASS tests passed / expected; null when the tests did not run (see status)'),
  PASS_TO_PASS: count
    .nullable()
    .describe('PASS_TO_PASS tests passed / expected; null when the tests did not run (see status)'),
  patch_apply_method: z.string().nullable().describe('git apply, git apply --3way or patch --fuzz=5'),
  exception_type: z.string().nullable().describe("Harbor's exception_info.exception_type"),
  isolated: z.boolean().describe('whether untrusted commands ran without network'),
  note: z.string(),
  duration_sec: z.number(),
  model: z
    .object({
      n_input_tokens: z.number().int().min(0).describe('prompt tokens, cached ones included'),
      n_cache_tokens: z.number().int().min(0),
      n_output_tokens: z.number().int().min(0),
      cost_usd: z.number().nullable().describe('null when the model has no known price'),
    })
    .optional()
    .describe("the trial's model calls through berth's gateway (agent_result), when it made any"),
});

export const modelUsageSchema = z
  .object({
    n_input_tokens: z.number().int().min(0),
    n_cache_tokens: z.number().int().min(0),
    n_output_tokens: z.number().int().min(0),
    cost_usd: z.number().nullable().describe('USD over the trials whose cost is known; null when none is'),
    n_trials_cost_unknown: z.number().int().min(0),
  })
  .describe("tokens and cost of the job's model calls (Harbor's JobStats fields)");

export const runReportSchema = z
  .object({
    schema_version: z
      .literal(2)
      .describe('2: resolved_rate is over finished trials; finished, tests_ran, instances added'),
    berth_version: z.string(),
    job_name: z.string(),
    job_dir: z.string(),
    dataset: z.string(),
    agent: z.string(),
    resolved: z.number().int().min(0).describe('trials resolved'),
    total: z.number().int().min(0).describe('trials planned'),
    finished: z
      .number()
      .int()
      .min(0)
      .describe(
        "trials that ran to an outcome (total minus counts.cancelled and counts.not_run); Harbor's n_trials",
      ),
    resolved_rate: z
      .number()
      .min(0)
      .max(1)
      .describe(
        'resolved / finished (0 when none finished); equals resolved / total unless the run was interrupted',
      ),
    cancelled: z.boolean().describe('true when stopped by Ctrl-C or SIGTERM before every trial finished'),
    instances: z
      .object({
        dataset: z
          .number()
          .int()
          .min(0)
          .describe(
            "SWE-bench's total_instances: the instances run plus the rows picked by -i/-x without a prediction",
          ),
        submitted: z
          .number()
          .int()
          .min(0)
          .describe(
            "instances run: those with a prediction for -a predictions, all otherwise (SWE-bench's submitted_instances)",
          ),
        without_prediction: z.number().int().min(0).describe('dataset - submitted: not run'),
      })
      .describe('what the run covered, by instance (trials = instances x attempts)'),
    duration_sec: z.number(),
    counts: z.object({
      completed: z
        .number()
        .int()
        .describe("trials whose tests ran to a verdict: resolved + unresolved (SWE-bench's completed)"),
      resolved: z.number().int(),
      unresolved: z.number().int(),
      error: z.number().int(),
      empty_patch: z.number().int(),
      patch_failed: z.number().int(),
      cancelled: z.number().int().describe('trials running when the run was interrupted'),
      not_run: z.number().int().describe('planned trials that never started (the run was interrupted)'),
    }),
    trials: z.array(runReportTrialSchema),
    model_usage: modelUsageSchema.optional(),
    not_started_over_budget: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("trials not started because the job's model budget (--model-budget) was spent"),
    swebench_report: swebenchReportSchema
      .nullable()
      .optional()
      .describe(
        "SWE-bench datasets: the harness's final report, as written to <job_dir>/swebench-report.json; null otherwise",
      ),
  })
  .describe('berth run --json output');

export type RunReport = z.infer<typeof runReportSchema>;

/** The JSON Schema of the `--json` document (draft 2020-12). */
export function runReportJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(runReportSchema) as Record<string, unknown>;
}

/** One trial as the report shows it. */
export function reportTrial(result: TrialResult): z.infer<typeof runReportTrialSchema> {
  const ran = testsRan(result);
  return {
    instance_id: result.berth.instance_id,
    attempt: result.berth.attempt,
    trial_name: result.trial_name,
    status: result.berth.status,
    resolved: result.berth.resolved,
    reward: result.verifier_result?.rewards?.reward ?? 0,
    tests_ran: ran,
    FAIL_TO_PASS: ran ? result.berth.FAIL_TO_PASS : null,
    PASS_TO_PASS: ran ? result.berth.PASS_TO_PASS : null,
    patch_apply_method: result.berth.patch_apply?.method ?? null,
    exception_type: result.exception_info?.exception_type ?? null,
    isolated: result.berth.isolated,
    note: result.berth.note,
    duration_sec: Math.round(result.berth.duration_sec * 1000) / 1000,
    ...(typeof result.agent_result?.n_input_tokens === 'number'
      ? {
          model: {
            n_input_tokens: Number(result.agent_result.n_input_tokens),
            n_cache_tokens: Number(result.agent_result.n_cache_tokens ?? 0),
            n_output_tokens: Number(result.agent_result.n_output_tokens ?? 0),
            cost_usd: typeof result.agent_result.cost_usd === 'number' ? result.agent_result.cost_usd : null,
          },
        }
      : {}),
  };
}

/**
 * Builds the `--json` document of a finished (or stopped) job. `meta.scope` gives the
 * dataset and submitted instance counts; without it every planned instance counts as submitted.
 * `meta.swebench` is the job's SWE-bench harness report (SWE-bench datasets).
 */
export function buildRunReport(
  summary: JobSummary,
  meta: { dataset: string; agent: string; scope?: RunScope; swebench?: SwebenchReport | null },
): RunReport {
  const trials = summary.trials.map(reportTrial);
  const by = (s: string) => trials.filter((t) => t.status === s).length;
  const c = summaryCounts(summary);
  const attempts = meta.scope?.attempts ?? 1;
  const submitted = meta.scope?.submittedInstances ?? Math.ceil(summary.total / attempts);
  const dataset = meta.scope?.datasetInstances ?? submitted;
  return {
    schema_version: 2,
    berth_version: VERSION,
    job_name: summary.job_name,
    job_dir: summary.job_dir,
    dataset: meta.dataset,
    agent: meta.agent,
    resolved: summary.resolved,
    total: summary.total,
    finished: c.finished,
    resolved_rate: c.finished === 0 ? 0 : summary.resolved / c.finished,
    cancelled: summary.cancelled,
    instances: { dataset, submitted, without_prediction: dataset - submitted },
    duration_sec: Math.round(summary.duration_sec * 1000) / 1000,
    counts: {
      completed: c.completed,
      resolved: by('resolved'),
      unresolved: by('unresolved'),
      error: by('error'),
      empty_patch: by('empty_patch'),
      patch_failed: by('patch_failed'),
      cancelled: by('cancelled'),
      not_run: summary.total - trials.length,
    },
    trials,
    ...(summary.model_usage ? { model_usage: summary.model_usage } : {}),
    ...(summary.not_started_over_budget ? { not_started_over_budget: summary.not_started_over_budget } : {}),
    swebench_report: meta.swebench ?? null,
  };
}
