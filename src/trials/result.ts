/**
 * The trial result written to `jobs/<job>/<trial>/result.json`, with Harbor's
 * field names (`src/harbor/models/trial/result.py`: task_name, trial_name,
 * agent_info, verifier_result.rewards, exception_info, started_at/finished_at
 * per phase) so Harbor's tools can read it; berth's own facts live under `berth`.
 */
import type { SwebenchRules } from '../grading/swebench.ts';
import type { TaskCategories } from '../results/categories.ts';
import type { LimitsRecord } from '../sandbox/limits.ts';
import type { TamperRecord } from '../verifiers/tampering/types.ts';
import type { HarborTrialConfig } from './file-format.ts';

/** Start and end of one phase, ISO 8601 UTC. */
export interface TimingInfo {
  started_at: string;
  finished_at: string;
}

/** Harbor's ExceptionInfo. `exception_type` uses Harbor's names where one exists. */
export interface ExceptionInfo {
  exception_type: string;
  exception_message: string;
  exception_traceback: string;
  occurred_at: string;
}

/**
 * What a trial came to:
 * - `resolved` / `unresolved`: the verifier ran and gave its verdict;
 * - `error`: no trustworthy verdict (invalid log, timeout, set-up failure, crash);
 * - `empty_patch`: the agent submitted nothing (SWE-bench's empty_patch);
 * - `patch_failed`: the agent's patch applies no way;
 * - `cancelled`: stopped by Ctrl-C (re-run on resume).
 */
export const TRIAL_STATUSES = [
  'resolved',
  'unresolved',
  'error',
  'empty_patch',
  'patch_failed',
  'cancelled',
] as const;
export type TrialStatus = (typeof TRIAL_STATUSES)[number];

export interface TrialResult {
  id: string;
  task_name: string;
  trial_name: string;
  trial_uri: string;
  /** Dataset name (the folder or file name given with -p). */
  source: string;
  /**
   * Harbor's task id: `{path}` of the task's folder, or of the row file for a SWE-bench row
   * (the row is `config.berth.task_origin`).
   */
  task_id: { path: string };
  /** sha256 of the task as loaded (environment, verifier, solution): a changed task is re-run on resume. */
  task_checksum: string;
  /** The trial's configuration (Harbor's TrialConfig), as in its `config.json`. */
  config: HarborTrialConfig;
  agent_info: { name: string; version: string; model_info: { name: string; provider?: string } | null };
  agent_result: Record<string, unknown> | null;
  verifier_result: { rewards: Record<string, number> | null } | null;
  exception_info: ExceptionInfo | null;
  started_at: string;
  finished_at: string;
  environment_setup: TimingInfo | null;
  agent_setup: TimingInfo | null;
  agent_execution: TimingInfo | null;
  verifier: TimingInfo | null;
  berth: BerthTrialFacts;
}

export interface BerthTrialFacts {
  version: string;
  instance_id: string;
  /** 1-based attempt (`-k`). */
  attempt: number;
  status: TrialStatus;
  resolved: boolean;
  /** sha256 (hex) of the submitted patch; null when the agent acted in the environment. */
  patch_sha256: string | null;
  /** Files in the trial folder, relative to it. */
  files: {
    patch?: string;
    apply_log?: string;
    install_log?: string;
    test_output?: string;
    report?: string;
    /** The model gateway's record of the trial's model calls (JSON lines). */
    model_calls?: string;
  };
  patch_apply: { applied: boolean; method: string | null } | null;
  install: {
    exit_code: number | null;
    timed_out: boolean;
    duration_sec: number;
    /** The environment started from the install cache: the install ran once, in an earlier trial. */
    cached?: boolean;
  } | null;
  /**
   * The environment's entry in the install cache (src/environments/local/install-cache.ts), when
   * it has one: `hit` when it started from the entry, and then how its files were made from it
   * (`overlay`: copy-on-write; `copy`), with why not an overlay when one could not be mounted.
   */
  install_cache?: { hit: boolean; method?: 'overlay' | 'copy'; note?: string };
  /** Whether untrusted commands ran without network, and how. */
  isolated: boolean;
  isolation_method: string | null;
  /**
   * The resource limits of the trial's untrusted commands and how each was enforced
   * (src/sandbox/limits.ts, docs/security.md); absent when the environment applies none.
   */
  limits?: LimitsRecord;
  FAIL_TO_PASS: { passed: number; total: number } | null;
  PASS_TO_PASS: { passed: number; total: number } | null;
  /** A short human note: the error reason, the apply method, ... */
  note: string;
  /**
   * Every exception the trial recorded, in order, when there was more than one (an agent
   * timeout and then a verifier error): `exception_info` keeps the first, as Harbor does.
   * Absent otherwise.
   */
  exceptions?: ExceptionInfo[];
  /**
   * What the tamper checks saw (SWE-bench rows; src/verifiers/tampering/): findings by layer, and
   * whether they refused a pass under berth's default rules (`vetoed`: not resolved, reason
   * tampering). Recorded under every rule set.
   */
  tampering?: TamperRecord | null;
  /** The rules that decided `status` (`berth run --rules`; SWE-bench rows). */
  rules?: SwebenchRules;
  /** The verdict under each rule set, whichever decided (SWE-bench rows). */
  verdict_by_rules?: Record<string, { status: string; resolved: boolean }>;
  /**
   * Entries of the environment's `agent/`, `verifier/` or `artifacts/` log folders left out
   * when berth copied them into the trial folder (links and special files, never followed;
   * files over the size cap): `path: kind -> target (reason)`. Absent when nothing was.
   */
  not_copied?: Partial<Record<'agent' | 'verifier' | 'artifacts', string[]>>;
  /** The verifier's details (per-test verdicts, exit code, parser...). */
  verifier_details: Record<string, unknown> | null;
  duration_sec: number;
  /** The task's provenance (Harbor's `[metadata.source]`: repository, PR, licence), when it has one. */
  task_source?: Record<string, unknown> | null;
  /** The task's repository, language and task type, when it tells (src/results/categories.ts). */
  categories?: TaskCategories;
}
