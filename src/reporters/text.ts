/**
 * Terminal output of `berth run`: on a TTY, a table like the seed harness's
 * (instance, resolved, F2P x/y, P2P x/y, note) after the run; without a TTY
 * or in CI, one line per finished trial as it finishes. Both end with
 * `resolved 4/4 (100.0%) in 10.3s`.
 */

import { fileURLToPath } from 'node:url';
import { createLogUpdate } from 'log-update';
import type { JobSummary } from '../jobs/job.ts';
import { testOutputTailSync } from '../results/read-job.ts';
import {
  describeRewards,
  testsRan as testsRanIn,
  trialRecordFromResult,
  wantsOutputTail,
} from '../results/trial-record.ts';
import type { TrialResult } from '../trials/result.ts';
import { plainTable } from './plain-table.ts';
import type { Reporter, RunScope } from './reporter.ts';

export type { RunScope } from './reporter.ts';

function fraction(c: { passed: number; total: number } | null): string {
  return c ? `${c.passed}/${c.total}` : '-';
}

/** Whether the trial's tests ran, so its FAIL_TO_PASS / PASS_TO_PASS counts mean something (src/results/trial-record.ts). */
export function testsRan(result: TrialResult): boolean {
  return testsRanIn(result as unknown as Record<string, unknown>);
}

/**
 * Why the trial ended as it did (src/results/trial-record.ts): the first failing tests by name,
 * the exception and its phase, the agent's exit code, or the rewards. A resolved trial keeps
 * berth's note (the apply method, discarded files) since its score says the rest.
 */
export function trialWhy(result: TrialResult): string {
  if (result.berth.resolved && result.berth.note) return result.berth.note;
  const raw = result as unknown as Record<string, unknown>;
  const dir =
    typeof result.trial_uri === 'string' && result.trial_uri.startsWith('file:')
      ? fileURLToPath(result.trial_uri)
      : null;
  return trialRecordFromResult(raw, {
    fallbackName: result.trial_name ?? result.berth.instance_id,
    outputTail: dir && wantsOutputTail(raw) ? testOutputTailSync(dir) : null,
  }).why;
}

/** Whether the trial is graded by rewards alone (Harbor tasks): no FAIL_TO_PASS / PASS_TO_PASS counts. */
function rewardGraded(result: TrialResult): boolean {
  return result.berth.FAIL_TO_PASS === null && result.berth.PASS_TO_PASS === null;
}

function rewardCell(result: TrialResult): string {
  const rewards = result.verifier_result?.rewards;
  return rewards && Object.keys(rewards).length > 0 ? describeRewards(rewards) : 'no reward';
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

/**
 * Renders the seed-style table (columns padded, header first): `not run` where the tests did not
 * run; Harbor trials (graded by rewards) show their rewards instead of F2P / P2P.
 */
export function renderTable(results: TrialResult[], attempts = 1): string {
  const counted = results.some((r) => !rewardGraded(r));
  const rewarded = results.some((r) => rewardGraded(r));
  const header = [
    'instance',
    'resolved',
    ...(counted ? ['F2P', 'P2P'] : []),
    ...(rewarded ? ['reward'] : []),
    'note',
  ];
  const rows = [
    ...results.map((r) => {
      const ran = testsRan(r);
      const graded = rewardGraded(r);
      return [
        instanceCell(r, attempts),
        resolvedCell(r),
        ...(counted
          ? graded
            ? ['-', '-']
            : [
                ran ? fraction(r.berth.FAIL_TO_PASS) : 'not run',
                ran ? fraction(r.berth.PASS_TO_PASS) : 'not run',
              ]
          : []),
        ...(rewarded ? [graded ? rewardCell(r) : '-'] : []),
        trialWhy(r),
      ];
    }),
  ];
  return plainTable(header, rows);
}

/**
 * One line for a finished trial (CI / non-TTY output): its outcome, its score (F2P / P2P counts,
 * or a Harbor trial's rewards, or `tests not run (empty patch)`), its time and why it ended so.
 */
export function trialLine(result: TrialResult, attempts = 1, reused = false): string {
  const score = rewardGraded(result)
    ? [rewardCell(result)]
    : testsRan(result)
      ? [`F2P ${fraction(result.berth.FAIL_TO_PASS)}`, `P2P ${fraction(result.berth.PASS_TO_PASS)}`]
      : [`tests not run (${resolvedCell(result)})`];
  return [
    instanceCell(result, attempts),
    resolvedCell(result),
    ...score,
    `${result.berth.duration_sec.toFixed(1)}s`,
    trialWhy(result) + (reused ? ' (kept from a previous run)' : ''),
  ].join('  ');
}

/** `1m05s`, `42s`, `1h02m`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** What the live progress line counts. */
export interface ProgressCounts {
  total: number;
  done: number;
  resolved: number;
  failed: number;
  errored: number;
  running: number;
  /** Trials kept from a previous run (they took no time now, so the estimate leaves them out). */
  reused: number;
}

/**
 * The live progress line: counts, elapsed time and an estimate of the time left (the mean wall
 * time per trial finished in this run, times the trials left; none before the first one).
 */
export function progressLine(counts: ProgressCounts, elapsedSec: number): string {
  const ran = counts.done - counts.reused;
  const left = counts.total - counts.done;
  const estimate =
    left === 0
      ? ''
      : ran > 0
        ? `, about ${formatDuration((elapsedSec / ran) * left)} left`
        : ', estimating time left';
  const parts = [`${counts.done}/${counts.total} finished`, `${counts.resolved} resolved`];
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  if (counts.errored > 0) parts.push(`${counts.errored} errored`);
  if (counts.running > 0) parts.push(`${counts.running} running`);
  return `${parts.join(', ')} | ${formatDuration(elapsedSec)} elapsed${estimate}`;
}

/** A live region on a terminal, redrawn in place. */
export interface LiveRegion {
  render(text: string): void;
  clear(): void;
}

/**
 * The live region of a terminal stream, drawn with log-update (wrapping and erasing handled);
 * undefined for a terminal that reports no width (a pseudo-terminal of size 0), where a live line
 * cannot be drawn.
 */
export function liveRegion(stream: NodeJS.WriteStream): LiveRegion | undefined {
  if (!stream.columns) return undefined;
  const draw = createLogUpdate(stream);
  return { render: (text) => draw(text), clear: () => draw.clear() };
}

/**
 * The reporter for a terminal (`tty`: a live progress line with counts, elapsed time and the
 * time left, the table at the end) or a log (`lines`: one line per trial as it finishes).
 */
export function textReporter(options: {
  mode: 'tty' | 'lines';
  attempts: number;
  write: (text: string) => void;
  /** Planned trials, for the progress line. */
  total?: number;
  /** Where the TTY progress line is drawn (usually stderr), redrawn in place and cleared at the end. */
  live?: LiveRegion | undefined;
  /** What the run covered; with `predictions`, a SWE-bench-style category line follows the summary. */
  scope?: RunScope;
  /** Milliseconds now (tests); `performance.now` by default. */
  now?: () => number;
  /** Seconds between redraws of the elapsed time; 0 for none (tests). Default 1. */
  tickSec?: number;
  /** Harbor's `-q`: no line per trial, no live line, no table; the summary lines only. */
  quiet?: boolean;
}): Reporter {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const counts: ProgressCounts = {
    total: options.total ?? 0,
    done: 0,
    resolved: 0,
    failed: 0,
    errored: 0,
    running: 0,
    reused: 0,
  };
  const draw = () => options.live?.render(progressLine(counts, (now() - started) / 1000));
  let timer: NodeJS.Timeout | undefined;
  const tick = options.tickSec ?? 1;
  const redraw = () => {
    draw();
    if (!timer && options.live && tick > 0) {
      timer = setInterval(draw, tick * 1000);
      timer.unref();
    }
  };
  // The first frame waits for the first trial: berth's own lines before it are not overwritten.
  return {
    onTrialStart() {
      counts.running++;
      if (options.mode === 'tty' && !options.quiet) redraw();
    },
    onTrialEnd(result, event) {
      const reused = event.reused;
      counts.done++;
      if (reused) counts.reused++;
      else counts.running = Math.max(0, counts.running - 1);
      if (result.berth.resolved) counts.resolved++;
      else if (result.berth.status === 'unresolved' || result.berth.status === 'empty_patch') counts.failed++;
      else if (result.berth.status !== 'cancelled') counts.errored++;
      if (options.quiet) return;
      if (options.mode === 'lines') options.write(`${trialLine(result, options.attempts, reused)}\n`);
      else redraw();
    },
    onJobEnd({ summary }) {
      if (timer) clearInterval(timer);
      if (options.mode === 'tty' && !options.quiet) {
        options.live?.clear();
        options.write(`${renderTable(summary.trials, options.attempts)}\n`);
      }
      options.write(`${summaryLine(summary, options.scope)}\n`);
      const models = modelUsageLine(summary);
      if (models) options.write(`${models}\n`);
      if (options.scope?.predictions) options.write(`${categoryLine(summary, options.scope)}\n`);
    },
  };
}
