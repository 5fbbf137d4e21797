/**
 * Terminal output of `berth run`: on a TTY, a table like the seed harness's
 * (instance, resolved, F2P x/y, P2P x/y, note) after the run; without a TTY
 * or in CI, one line per finished trial as it finishes. Both end with
 * `resolved 4/4 (100.0%) in 10.3s`.
 */
import type { JobSummary } from '../jobs/job.ts';
import type { TrialResult } from '../trials/result.ts';

export interface Reporter {
  /** A trial finished (or was kept from a previous run). */
  trialEnded(result: TrialResult, reused: boolean): void;
  /** The job ended; `summary.cancelled` when stopped early. */
  jobEnded(summary: JobSummary): void;
}

function fraction(c: { passed: number; total: number } | null): string {
  return c ? `${c.passed}/${c.total}` : '-';
}

function resolvedCell(result: TrialResult): string {
  if (result.berth.resolved) return 'yes';
  return result.berth.status === 'unresolved' ? 'no' : result.berth.status.replace('_', ' ');
}

function instanceCell(result: TrialResult, attempts: number): string {
  return attempts > 1 ? `${result.berth.instance_id} #${result.berth.attempt}` : result.berth.instance_id;
}

/** The closing line: `resolved 4/4 (100.0%) in 10.3s`. */
export function summaryLine(summary: JobSummary): string {
  const rate = summary.total === 0 ? 0 : (100 * summary.resolved) / summary.total;
  const stopped = summary.cancelled
    ? ` (stopped: ${summary.trials.filter((t) => t.berth.status !== 'cancelled').length} of ${summary.total} trials finished)`
    : '';
  const reused = summary.reused > 0 ? ` (${summary.reused} kept from a previous run)` : '';
  return `resolved ${summary.resolved}/${summary.total} (${rate.toFixed(1)}%) in ${summary.duration_sec.toFixed(1)}s${reused}${stopped}`;
}

/** Renders the seed-style table (columns padded, header first). */
export function renderTable(results: TrialResult[], attempts = 1): string {
  const rows = [
    ['instance', 'resolved', 'F2P', 'P2P', 'note'],
    ...results.map((r) => [
      instanceCell(r, attempts),
      resolvedCell(r),
      fraction(r.berth.FAIL_TO_PASS),
      fraction(r.berth.PASS_TO_PASS),
      r.berth.note,
    ]),
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

/** One line for a finished trial (CI / non-TTY output). */
export function trialLine(result: TrialResult, attempts = 1, reused = false): string {
  return [
    instanceCell(result, attempts),
    resolvedCell(result),
    `F2P ${fraction(result.berth.FAIL_TO_PASS)}`,
    `P2P ${fraction(result.berth.PASS_TO_PASS)}`,
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
}): Reporter {
  let done = 0;
  let resolved = 0;
  return {
    trialEnded(result, reused) {
      done++;
      if (result.berth.resolved) resolved++;
      if (options.mode === 'lines') options.write(`${trialLine(result, options.attempts, reused)}\n`);
      else
        options.progress?.(
          `\r\u001b[K${done}/${options.total ?? '?'} finished, ${resolved} resolved (last: ${instanceCell(result, options.attempts)} ${resolvedCell(result)})`,
        );
    },
    jobEnded(summary) {
      if (options.mode === 'tty') {
        options.progress?.('\r\u001b[K');
        options.write(`${renderTable(summary.trials, options.attempts)}\n`);
      }
      options.write(`${summaryLine(summary)}\n`);
    },
  };
}
