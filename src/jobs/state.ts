/**
 * The integrity state of a job folder: the sha256 of every trial result.json berth wrote,
 * kept in `berth-state.json` (written atomically) and checked on resume, so a result changed
 * behind berth's back is not trusted; and reading the job's JSON state files, refusing a
 * damaged one rather than taking the job for a fresh one.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../errors.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';

/** The job's own record of what berth wrote: sha256 of each trial's result.json, by trial name. */
export const JOB_STATE_FILE = 'berth-state.json';

export interface JobState {
  result_sha256: Record<string, string>;
  /**
   * True when the job folder has no state file: a job written by a berth from before the
   * state file existed. Its results are kept as they are (and recorded from then on).
   */
  legacy: boolean;
}

export async function readJobState(jobDir: string): Promise<JobState> {
  let text: string;
  try {
    text = await readFile(join(jobDir, JOB_STATE_FILE), 'utf8');
  } catch (error) {
    return { result_sha256: {}, legacy: (error as NodeJS.ErrnoException).code === 'ENOENT' };
  }
  try {
    const state = JSON.parse(text) as Partial<JobState>;
    if (state && typeof state.result_sha256 === 'object' && state.result_sha256 !== null)
      return { result_sha256: { ...state.result_sha256 }, legacy: false };
  } catch {}
  return { result_sha256: {}, legacy: false };
}

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * Records the sha256 of trial results as berth writes them, saving the state file after each
 * (writes serialised, so the last one written is the latest state).
 */
export class ResultLedger {
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly jobDir: string,
    readonly state: JobState,
  ) {}

  /** Records the current bytes of `<trial>/result.json` (or forgets a trial that has none). */
  async record(trialName: string): Promise<void> {
    const bytes = await readFile(join(this.jobDir, trialName, 'result.json')).catch(() => undefined);
    if (bytes) this.state.result_sha256[trialName] = sha256(bytes);
    else delete this.state.result_sha256[trialName];
    const body = { result_sha256: { ...this.state.result_sha256 } };
    this.saving = this.saving
      .then(() => writeJsonAtomic(join(this.jobDir, JOB_STATE_FILE), body))
      .catch(() => {});
    return this.saving;
  }

  /** Resolves when every save started so far is done. */
  flushed(): Promise<void> {
    return this.saving;
  }
}

/**
 * Reads a JSON state file of a job folder (config.json, a trial's result.json).
 * @returns the parsed object, or undefined when the file does not exist.
 * @throws InputError when it exists but cannot be read or is not a JSON object: a damaged
 *   job is refused, never taken for a fresh one (resuming would replace its results).
 */
export async function readJobJson(
  path: string,
  jobName: string,
): Promise<Record<string, unknown> | undefined> {
  return (await readJobFile(path, jobName))?.value;
}

/**
 * `readJobJson` with the sha256 of the file's bytes (to compare with what berth recorded).
 * @throws InputError as `readJobJson`.
 */
export async function readJobFile(
  path: string,
  jobName: string,
): Promise<{ value: Record<string, unknown>; sha256: string } | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw damagedJob(path, jobName, (error as Error).message);
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw damagedJob(path, jobName, `not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw damagedJob(
      path,
      jobName,
      `not a JSON object (${Array.isArray(value) ? 'an array' : typeof value})`,
    );
  return { value: value as Record<string, unknown>, sha256: sha256(bytes) };
}

function damagedJob(path: string, jobName: string, why: string): InputError {
  return new InputError(
    { file: path },
    `${why}; job ${jobName} cannot be resumed from a damaged state file and nothing was changed: ` +
      'repair or remove that file (or the whole job folder), or use another --job-name',
  );
}
