/**
 * Terminal output of `berth run`: on a TTY, a table like the seed harness's
 * (instance, resolved, F2P x/y, P2P x/y, note) after the run; without a TTY
 * or in CI, one line per finished trial as it finishes. Both end with
 * `resolved 4/4 (100.0%) in 10.3s`.
 */
import type { JobSummary } from '../jobs/job.ts';
import type { TrialResult } from '../trials/result.ts';
import type { Reporter, RunScope } from './reporter.ts';

export type { RunScope } from './reporter.ts';

function fraction(c: { passed: number; total: number } | null): string {
  return c ? `${c.passed}/${c.total}` : '-';
}

/**
 * Whether the trial's tests ran, so its FAIL_TO_PASS / PASS_TO_PASS counts mean something.
 * False for `empty_patch` (SWE-bench runs no tests for an empty patch), `patch_failed`,
 * `cancelled`, and an `error` raised before the verifier started (e.g. the environment's
 * set-up failed): such trials carry `{passed: 0, total: N}` counts that were never measured.
 */
export function testsRan(result: TrialResult): boolean {
  const status = result.berth.status;
  if (status === 'empty_patch' || status === 'patch_failed' || status === 'cancelled') return false;
  if (status === 'resolved' || status === 'unresolved') return true;
  return result.verifier !== null && result.verifier !== undefined;
}

function resolvedCell(result: TrialResult): string {
  if (result.berth.resolved) return 'yes';
  return result.berth.status === 'unresolved' ? 'no' : result.berth.status.replace('_', ' ');
}

function instanceCell(result: TrialResult, attempts: number): string {
  return attempts > 1 ? `${result.berth.instance_id} #${result.berth.attempt}` : result.berth.instance_id;
}

/** Counts of a job's trials as the summary shows them. */
export interface SummaryCounts {
  total: number;
  /** Trials that ran to an outcome (not cancelled, not left unstarted by an interruption). */
  finished: number;
  resolved: number;
  /** Tests ran and gave a verdict (SWE-bench's `completed_instances`): resolved + unresolved. */
  completed: number;
  unresolved: number;
  empty_patch: number;
  /** SWE-bench's `error_instances` (no verdict): berth's `error` plus `patch_failed`. */
  error: number;
  patch_failed: number;
  /** Running when the job was interrupted (recorded as `cancelled`). */
  cancelled: number;
  /** Planned but never started because the job was interrupted. */
  not_started: number;
}

export function summaryCounts(summary: JobSummary): SummaryCounts {
  const by = (s: string) => summary.trials.filter((t) => t.berth.status === s).length;
  const cancelled = by('cancelled');
  const resolved = summary.trials.filter((t) => t.berth.resolved).length;
  const unresolved = by('unresolved');
  return {
    total: summary.total,
    finished: summary.trials.length - cancelled,
    resolved,
    completed: resolved + unresolved,
    unresolved,
    empty_patch: by('empty_patch'),
    error: by('error') + by('patch_failed'),
    patch_failed: by('patch_failed'),
    cancelled,
    not_started: summary.total - summary.trials.length,
  };
}

const percent = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)}%`);

/**
 * The closing line. A complete run: `resolved 4/4 (100.0%) in 10.3s`. An interrupted run
 * counts the finished trials only, as Harbor's `n_trials` counts trials with a reward:
 * `resolved 1/2 (50.0% of the finished trials) in 3.1s; interrupted: 2 of 4 trials not run
 * (1 cancelled while running, 1 never started)`. With predictions for only some instances,
 * the rate is over the submitted instances and over the dataset, as sb-cli prints both.
 */
export function summaryLine(summary: JobSummary, scope?: RunScope): string {
  const c = summaryCounts(summary);
  const interrupted = summary.cancelled && c.finished < c.total;
  const partial = scope !== undefined && scope.submittedInstances < scope.datasetInstances;
  const denominator = interrupted ? c.finished : c.total;
  const unit = scope && scope.attempts === 1 ? 'instances' : 'trials';
  const of = interrupted ? ' of the finished trials' : partial ? ` of the submitted ${unit}` : '';
  const datasetTrials = scope ? scope.datasetInstances * scope.attempts : 0;
  const dataset = partial
    ? `; ${c.resolved}/${datasetTrials} = ${percent(c.resolved, datasetTrials)} of the dataset`
    : '';
  const reused = summary.reused > 0 ? ` (${summary.reused} kept from a previous run)` : '';
  const stopped = interrupted
    ? `; interrupted: ${c.total - c.finished} of ${c.total} trials not run (${c.cancelled} cancelled while running, ${c.not_started} never started)`
    : '';
  return `resolved ${c.resolved}/${denominator} (${percent(c.resolved, denominator)}${of}${dataset}) in ${summary.duration_sec.toFixed(1)}s${reused}${stopped}`;
}

/**
 * The job's model use: `model: 12,345 tokens in (2,000 cached), 678 out; cost $0.0123`, with
 * the trials of unknown cost and those not started over the budget said. Undefined when no
 * trial called a model.
 */
export function modelUsageLine(summary: JobSummary): string | undefined {
  const u = summary.model_usage;
  if (!u) return undefined;
  const n = (x: number) => x.toLocaleString('en-US');
  const cost =
    u.cost_usd === null
      ? 'cost unknown (no price for the model)'
      : `cost $${u.cost_usd.toFixed(4)}${u.n_trials_cost_unknown > 0 ? ` (+ ${u.n_trials_cost_unknown} trial(s) of unknown cost)` : ''}`;
  const budget = summary.not_started_over_budget
    ? `; model budget spent: ${summary.not_started_over_budget} trial(s) not started`
    : '';
  return `model: ${n(u.n_input_tokens)} tokens in (${n(u.n_cache_tokens)} cached), ${n(u.n_output_tokens)} out; ${cost}${budget}`;
}

/**
 * The SWE-bench-style category line printed for `-a predictions` (the harness's report:
 * total, submitted, completed, resolved, unresolved, empty patch, error):
 * `instances: 4 in the dataset, 1 submitted, 3 without a prediction (not run); 1 completed
 * (0 resolved, 1 unresolved), 0 empty patch, 0 error`. With -k > 1 the outcome counts are trials.
 */
export function categoryLine(summary: JobSummary, scope: RunScope): string {
  const c = summaryCounts(summary);
  const unit = scope.attempts === 1 ? '' : ` (${scope.attempts} attempts each; outcomes count trials)`;
  const errors =
    c.patch_failed > 0 ? `${c.error} error (${c.patch_failed} patch failed)` : `${c.error} error`;
  const interrupted = c.finished < c.total ? `, ${c.total - c.finished} not run (interrupted)` : '';
  return (
    `instances: ${scope.datasetInstances} in the dataset, ${scope.submittedInstances} submitted, ` +
    `${scope.datasetInstances - scope.submittedInstances} without a prediction (not run)${unit}; ` +
    `${c.completed} completed (${c.resolved} resolved, ${c.unresolved} unresolved), ${c.empty_patch} empty patch, ${errors}${interrupted}`
  );
}

/** Renders the seed-style table (columns padded, header first); `not run` where the tests did not run. */
export function renderTable(results: TrialResult[], attempts = 1): string {
  const rows = [
    ['instance', 'resolved', 'F2P', 'P2P', 'note'],
    ...results.map((r) => {
      const ran = testsRan(r);
      return [
        instanceCell(r, attempts),
        resolvedCell(r),
        ran ? fraction(r.berth.FAIL_TO_PASS) : 'not run',
        ran ? fraction(r.berth.PASS_TO_PASS) : 'not run',
        r.berth.note,
      ];
    }),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => (row[i] as string).length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i < 4 ? cell.padEnd(widths[i] as number) : cell))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One line for a finished trial (CI / non-TTY output); `tests not run (empty patch)` instead of counts when they did not run. */
export function trialLine(result: TrialResult, attempts = 1, reused = false): string {
  return [
    instanceCell(result, attempts),
    resolvedCell(result),
    ...(testsRan(result)
      ? [`F2P ${fraction(result.berth.FAIL_TO_PASS)}`, `P2P ${fraction(result.berth.PASS_TO_PASS)}`]
      : [`tests not run (${resolvedCell(result)})`]),
    `${result.berth.duration_sec.toFixed(1)}s`,
    result.berth.note + (reused ? ' (kept from a previous run)' : ''),
  ].join('  ');
}

/**
 * The reporter for a terminal (`tty`: a live progress line on `progress`, the table at
 * the end) or a log (`lines`: one line per trial as it finishes).
 */
export function textReporter(options: {
  mode: 'tty' | 'lines';
  attempts: number;
  write: (text: string) => void;
  /** Planned trials, for the progress line. */
  total?: number;
  /** Where the TTY progress line goes (usually stderr); it is rewritten in place and cleared at the end. */
  progress?: (text: string) => void;
  /** What the run covered; with `predictions`, a SWE-bench-style category line follows the summary. */
  scope?: RunScope;
}): Reporter {
  let done = 0;
  let resolved = 0;
  return {
    onTrialEnd(result, event) {
      const reused = event.reused;
      done++;
      if (result.berth.resolved) resolved++;
      if (options.mode === 'lines') options.write(`${trialLine(result, options.attempts, reused)}\n`);
      else
        options.progress?.(
          `\r\u001b[K${done}/${options.total ?? '?'} finished, ${resolved} resolved (last: ${instanceCell(result, options.attempts)} ${resolvedCell(result)})`,
        );
    },
    onJobEnd({ summary }) {
      if (options.mode === 'tty') {
        options.progress?.('\r\u001b[K');
        options.write(`${renderTable(summary.trials, options.attempts)}\n`);
      }
      options.write(`${summaryLine(summary, options.scope)}\n`);
      const models = modelUsageLine(summary);
      if (models) options.write(`${models}\n`);
      if (options.scope?.predictions) options.write(`${categoryLine(summary, options.scope)}\n`);
    },
  };
}
