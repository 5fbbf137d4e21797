/**
 * What berth saw that could let the code under test decide its own verdict. Findings are facts
 * with the layer that saw them; under berth's default rules a finding with `veto` refuses a
 * pass (the trial is not resolved, reason `tampering`); under `--rules swebench` findings are
 * recorded and nothing else (the SWE-bench harness's verdict).
 */

export type TamperLayer =
  /** The submitted patch: runner configuration, plugin and shadow files. */
  | 'patch'
  /** berth's probe inside the test runner (pytest plugin, node:test reporter) against console and exit code. */
  | 'runner-report'
  /** What changed in the work folder while the tests ran. */
  | 'run'
  /** The environment outside the work folder (the engine's record; helper trust-fs). */
  | 'environment';

export interface TamperFinding {
  /** Short kebab-case name of what was seen, e.g. `runner-config`, `exit-code`. */
  kind: string;
  layer: TamperLayer;
  /** One sentence: what was seen, with paths, test ids and values. */
  message: string;
  /** True when the finding refuses a pass under berth's default rules. */
  veto: boolean;
  /** Files involved (repository-relative where possible). */
  paths?: string[];
  /** Test ids involved. */
  tests?: string[];
}

/** `berth.tampering` in a trial's result.json. */
export interface TamperRecord {
  /** True when a finding refuses a pass under berth's default rules. */
  vetoed: boolean;
  findings: TamperFinding[];
  /** What the probes could and could not check (e.g. a runner that writes no report). */
  notes: string[];
}
