import { readFileSync } from 'node:fs';
import { join } from 'node:path';
/**
 * The tamper corpus's case format: one attack a file under `test/tamper/cases/`, run by
 * `test/tamper/corpus.ts` on the targets it names. See test/tamper/README.md.
 */

/** The bundled sample's rows (examples/swe-dockerless.jsonl) a SWE-bench case attacks. */
export type SampleRow =
  | 'berth__durations-1'
  | 'berth__intervals-1'
  | 'berth__csvline-1'
  | 'berth__toposort-1';

/** Where the trial runs: the local environment (sandbox) or a Docker container. */
export type Target = 'local' | 'docker';

/**
 * What a trial came to, as a case states it:
 * - `resolved`: reward 1;
 * - `tampering`: not resolved, and the result says why (`berth.tampering.vetoed`, the
 *   findings berth saw);
 * - `unresolved`: not resolved, the tests said so (no tampering veto);
 * - `error`: no trustworthy verdict (invalid log, timeout, a phase failed).
 */
export type Outcome = 'resolved' | 'tampering' | 'unresolved' | 'error';

export interface Expectation {
  /** The outcome, or the outcomes any of which is right. */
  outcome: Outcome | Outcome[];
  /** Text one of the recorded tamper findings must contain (its kind or message), when given. */
  finding?: string | RegExp;
  /**
   * The trial's `exception_info.exception_type` (e.g. `VerifierProcessLimitError`, a resource
   * limit hit: docs/security.md), when given.
   */
  exception?: string | RegExp;
  /**
   * The most bytes the trial's folder in the jobs folder may hold (regular files, summed), when
   * given: output and files the untrusted code made reach the host only up to their caps.
   */
  trialBytesAtMost?: number;
}

/** A file the attack writes: new content, `null` to delete it, or a function of its old content. */
export type FileChange = string | null | ((old: string) => string | null);

/** An attack on one of the sample's SWE-bench / DockerLess rows. */
export interface SwebenchInput {
  kind: 'swebench';
  row: SampleRow;
  /**
   * Start from the gold patch (the row's `patch`) instead of the base: the attack is added to a
   * real fix. Default false (the attack alone: the tests fail unless the attack works).
   */
  withGold?: boolean;
  /**
   * The prediction, written as files (path -> change, relative to the repository); the corpus
   * turns them into a real `git diff` against the row's snapshot (with the gold patch applied
   * first when `withGold`).
   */
  files?: Record<string, FileChange>;
  /** The prediction as a raw unified diff (instead of `files`). */
  patch?: string;
  /**
   * An agent command (`berth run -a command`) run in the repository instead of a prediction:
   * berth grades its diff. Bash.
   */
  command?: string;
  /** With `command`: the agent's set-up command (`--agent-setup`), run before it. Bash. */
  setup?: string;
  /**
   * Commands berth's model-driven agent (`-a deckhand`) runs with its bash tool, one a turn, as
   * a scripted model server asks, then it finishes (instead of a prediction or `command`).
   */
  deckhand?: string[];
  /**
   * The row as this case runs it, where it differs from the sample's (its FAIL_TO_PASS and
   * PASS_TO_PASS stay the row's): `testCmd` is its test command (`{tests}` filled in as for the
   * row: `PYTHONPATH=$PWD/lib python3 -m pytest ... {tests}`); `testFiles` changes test files
   * after the row's test patch (path -> change, as in `files`), so the case's test patch is the
   * row's with these on top (an honest test pattern, for a control; a file it adds is run too).
   */
  rowChanges?: { testCmd?: string; testFiles?: Record<string, FileChange> };
}

/**
 * An attack on a Harbor task folder under `test/tamper/tasks/` (Docker only): the oracle runs
 * `solve` as its `solution/solve.sh`, or the `command` agent runs `command`, in the container.
 */
export interface HarborInput {
  kind: 'harbor';
  /** Folder name under test/tamper/tasks/. */
  task: string;
  /** The oracle's `solution/solve.sh` (bash). */
  solve?: string;
  /** An agent command (`berth run -a command`), bash, run in the container. */
  command?: string;
  /** With `command`: the agent's set-up command (`--agent-setup`), run before it. Bash. */
  setup?: string;
  /**
   * An image the task's Dockerfile builds FROM that the corpus does not build (e.g.
   * `berth-multilingual:bookworm`, examples/multilingual/image/build-image.sh): without it in the
   * engine the case is skipped, saying so.
   */
  image?: string;
}

/**
 * An attack on a task of the multilingual demo's dataset (`examples/multilingual/sample_tasks/`):
 * the `command` agent runs `command` in the task's repository, or `patch` is the task's prediction
 * (`-a predictions`), and berth's multilingual verifier grades it in a fresh environment of the
 * task (locally: berth's sandbox, `-e local`; on Docker, the task's
 * image on `berth-multilingual:bookworm`, which examples/multilingual/image/build-image.sh
 * builds: without it the case is skipped, saying so).
 */
export interface MultilingualInput {
  kind: 'multilingual';
  /** Folder name under examples/multilingual/sample_tasks/ (its instance id). */
  task: string;
  /** An agent command (`berth run -a command`), bash, run in the task's repository. */
  command?: string;
  /** Instead of `command`: the prediction, a raw unified diff (`berth run -a predictions`). */
  patch?: string;
}

export interface TamperCase {
  /** One sentence: what the attacker does. */
  title: string;
  /** Why it could raise a reward, which layer must catch it (free text, optional). */
  why?: string;
  input: SwebenchInput | HarborInput | MultilingualInput;
  targets: Target[];
  /** The verdict under berth's default rules. */
  expect: Expectation;
  /**
   * The verdict under `--rules swebench` (the SWE-bench harness's), SWE-bench rows only.
   * Required when `expect.outcome` is `tampering` (the case shows what the harness would say);
   * otherwise it defaults to `expect` without `tampering`.
   */
  swebench?: Expectation;
  /** Where one target's verdict differs (say why in a comment): its own `expect` and/or `swebench`. */
  on?: Partial<Record<Target, { expect?: Expectation; swebench?: Expectation }>>;
  /**
   * A hole berth does not close yet: the case runs and is expected to FAIL (vitest `it.fails`),
   * so fixing the hole turns it red until this is removed. Name who owns the fix.
   */
  knownHole?: { owner: string; note: string; targets?: Target[] };
}

/** Identity function that gives a case file its type. */
/** A file of a multilingual demo task (`examples/multilingual/sample_tasks/<task>/<path>`), as text. */
export function sampleTaskFile(task: string, ...path: string[]): string {
  return readFileSync(
    join(import.meta.dirname, '..', '..', 'examples', 'multilingual', 'sample_tasks', task, ...path),
    'utf8',
  );
}

export function defineCase(c: TamperCase): TamperCase {
  return c;
}
