/**
 * A job folder as the report, the viewer, `berth compare` and `berth leaderboard` see it:
 * one plain-data record per job and per trial, read from whatever berth version (or Harbor)
 * wrote the folder (src/results/read-job.ts). Everything here survives `JSON.stringify`; the
 * HTML report embeds it and the viewer serves it.
 */

/**
 * What a trial came to, for filtering and counting:
 * - `resolved`: the verifier gave the full reward (berth's `resolved`; reward >= 1 for Harbor);
 * - `failed`: the verifier ran and the task is not resolved, or the agent submitted nothing;
 * - `errored`: no trustworthy verdict (an exception before or in the verifier, a patch that
 *   does not apply);
 * - `cancelled`: stopped by an interruption;
 * - `running`: started, not finished (a live job);
 * - `pending`: planned, not started.
 */
export type TrialOutcome = 'resolved' | 'failed' | 'errored' | 'cancelled' | 'running' | 'pending';

/** The trial phases whose durations are reported (Harbor's timing fields). */
export const PHASES = ['environment', 'agent_setup', 'agent', 'verifier'] as const;
export type PhaseName = (typeof PHASES)[number];

/** The categories results are grouped by. */
export const CATEGORY_KEYS = ['repository', 'language', 'task_type'] as const;
export type CategoryKey = (typeof CATEGORY_KEYS)[number];

/** Passed out of total, for FAIL_TO_PASS and PASS_TO_PASS. */
export interface TestCount {
  passed: number;
  total: number;
}

/** One trial, as the report's table row shows it. */
export interface TrialRecord {
  /** The trial folder's name (`<task>__<attempt>` for berth, `<task>__<id>` for Harbor). */
  name: string;
  task: string;
  /** 1-based attempt; 1 when the folder does not say. */
  attempt: number;
  outcome: TrialOutcome;
  /** berth's status (resolved, unresolved, error, empty_patch, patch_failed, cancelled) or the outcome. */
  status: string;
  /** The verifier's rewards (Harbor's `verifier_result.rewards`). */
  rewards: Record<string, number> | null;
  /** The reward the resolved rate counts: `reward`, else the only key; null without rewards. */
  reward: number | null;
  exception: { type: string; message: string; phase: string | null } | null;
  /** Why the trial ended as it did, in one line (src/results/why.ts). */
  why: string;
  agent: string;
  model: string | null;
  /** The dataset (the trial's `source`). */
  dataset: string | null;
  repository: string | null;
  language: string | null;
  task_type: string | null;
  FAIL_TO_PASS: TestCount | null;
  PASS_TO_PASS: TestCount | null;
  /** Seconds per phase; null for a phase that did not run. */
  phases: Record<PhaseName, number | null>;
  /** Seconds from start to end of the trial. */
  duration_sec: number | null;
  /** Harbor's AgentContext counts; null when the agent reported none. */
  input_tokens: number | null;
  cache_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  started_at: string | null;
  finished_at: string | null;
  /** The phase running now (live jobs with an event log). */
  current_phase?: string | null;
}

/** One test of a trial's verdict. */
export interface TestVerdict {
  id: string;
  /** FAIL_TO_PASS, PASS_TO_PASS, PASS_TO_FAIL, FAIL_TO_FAIL, or the verifier's own name. */
  category: string;
  status: string;
  passed: boolean;
  /** Why it did not pass: missing, failed, error, skipped, truncated-log... */
  reason: string | null;
}

/** A text file of a trial, cut to its head and tail when large. */
export interface TrialFile {
  /** Path relative to the trial folder (also the link from the report). */
  path: string;
  size: number;
  head: string;
  tail: string;
  /** Bytes left out between head and tail (0: the whole file is in `head`). */
  omitted: number;
}

/** Everything a trial's page shows beyond its row. */
export interface TrialDetails {
  name: string;
  instruction: string | null;
  /** Where the instruction came from (a file of the trial, the trajectory, the task). */
  instruction_source: string | null;
  /** The ATIF trajectory (`agent/trajectory.json`), long texts cut; null when there is none. */
  trajectory: unknown;
  /** Why there is no trajectory, or that it was cut. */
  trajectory_note: string | null;
  patch: TrialFile | null;
  tests: TestVerdict[];
  /** `verifier/reward.txt` / `reward.json`, as written. */
  reward_files: TrialFile[];
  exception: { type: string; message: string; traceback: string; occurred_at: string | null } | null;
  /** Multi-step tasks: each step's rewards and exception. */
  steps: Array<{ name: string; rewards: Record<string, number> | null; exception: string | null }>;
  /** Logs and other text files of the trial folder. */
  logs: TrialFile[];
  /** Files the page does not show (binary or too many), for the list of links. */
  other_files: Array<{ path: string; size: number }>;
  /** The trial's result.json as written (for the raw view). */
  result: unknown;
}

/** A job folder. */
export interface JobRecord {
  /** The folder's name. */
  name: string;
  /** Absolute path of the folder. */
  dir: string;
  /** Who wrote it: berth's `run`, berth's `multilingual run`, or Harbor. */
  writer: 'berth' | 'berth-multilingual' | 'harbor' | 'unknown';
  dataset: string | null;
  agent: string | null;
  model: string | null;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string | null;
  /** True while the job runs (no finish time and a live lock, or events still coming). */
  running: boolean;
  /** Planned trials (finished, running and pending). */
  n_planned: number;
  trials: TrialRecord[];
  /** Whether `events.jsonl` was read. */
  has_events: boolean;
  /** Problems met while reading (a damaged result.json, ...), shown in the report. */
  warnings: string[];
}
