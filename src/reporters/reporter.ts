/**
 * Reporters, in the style of vitest's: an object with optional lifecycle hooks that the job
 * calls as it runs, chosen by name on the command line (`--reporter default|ci|json|...`,
 * repeatable; the names are in src/reporters/registry.ts, one reporter a file). Every hook
 * is optional; a reporter that wants everything implements `onEvent`.
 *
 * Order for one job: `onJobStart`, then for each trial `onTrialStart`, its events
 * (`onEvent` sees every event, those with their own hook too, before that hook), `onTrialEnd`;
 * finally `onJobEnd`. Trials run concurrently, so events of different trials interleave.
 * A trial kept from an earlier run of the job has no `onTrialStart`, only `onTrialEnd` with
 * `event.reused`. A hook that throws is a berth bug; reporters never change results.
 */
import type { JobSummary } from '../jobs/job.ts';
import type { BerthEvent, EventOf } from '../trials/events.ts';
import type { TrialResult } from '../trials/result.ts';
import type { SwebenchReport } from './swebench-report.ts';

/**
 * What the run covered, for summaries: the dataset's instances (after -i/-x/-l) and how
 * many of them were submitted (had a prediction, for `-a predictions`; all of them otherwise).
 */
export interface RunScope {
  /**
   * SWE-bench's `total_instances`: the instances run plus, for `-a predictions`, the rows
   * picked by -i/-x that have no prediction (rows left out by -l are not counted).
   */
  datasetInstances: number;
  /** Instances that were run: those with a prediction (SWE-bench's `submitted_instances`). */
  submittedInstances: number;
  /** Attempts per instance (-k). */
  attempts: number;
  /** Whether the agent reads a predictions file (prints the SWE-bench-style category line). */
  predictions: boolean;
}

/** What a reporter is made with (`ReporterFactory`). */
export interface ReporterContext {
  /**
   * Writes to standard output. When a machine-readable reporter (`json`) owns standard output,
   * the others get standard error here (as `--json` always did).
   */
  stdout: (text: string) => void;
  /** Writes to standard error. */
  stderr: (text: string) => void;
  /** Whether standard output / standard error are terminals. */
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** True under CI (`CI` set): no live rewriting of lines. */
  ci: boolean;
  /** The dataset as given on the command line (`-p`). */
  dataset: string;
  /** The agent's name. */
  agent: string;
  /** Trials planned. */
  total: number;
  scope: RunScope;
  /** Harbor's `-q/--quiet`: no line per trial and no live progress, the summary only. */
  quiet?: boolean;
}

/** The finished job as `onJobEnd` sees it. */
export interface FinishedJob {
  summary: JobSummary;
  /** The SWE-bench harness's report of the job (SWE-bench datasets), else null. */
  swebench: SwebenchReport | null;
}

export interface Reporter {
  /** The job starts: its folder is locked and its trials planned. */
  onJobStart?(event: EventOf<'job-start'>): void | Promise<void>;
  /** A trial starts (not called for trials kept from an earlier run). */
  onTrialStart?(event: EventOf<'trial-start'>): void;
  /** Every event of the job as it is emitted, in order. */
  onEvent?(event: BerthEvent): void;
  /** A trial ended (or was kept from an earlier run: `event.reused`), with its full result. */
  onTrialEnd?(result: TrialResult, event: EventOf<'trial-end'>): void;
  /** The job ended (`job.summary.cancelled` when stopped early). Awaited before berth exits. */
  onJobEnd?(job: FinishedJob, event: EventOf<'job-end'>): void | Promise<void>;
}

/** Makes a reporter for one run. */
export type ReporterFactory = (context: ReporterContext) => Reporter;
