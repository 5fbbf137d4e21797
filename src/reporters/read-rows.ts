/**
 * Reads finished trials of a job folder as category rows: the job's
 * `result.json` when it lists `trials` with the keys, else every
 * `<trial>/result.json` (Harbor's `verifier_result.rewards.reward`; categories
 * from the trial's `metadata`, then its top level).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../errors.ts';
import { repositoryFromTaskName } from '../results/trial-record.ts';
import type { CategoryRow } from './by-category.ts';

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError({ file }, `not JSON: ${(error as Error).message}`);
  }
}

/**
 * The category values of a trial or a job row: its `berth.categories` (src/results/categories.ts),
 * its `metadata`, its own fields; the repository also from its provenance or its task name.
 */
function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, string | undefined> {
  const metadata = (source.metadata ?? {}) as Record<string, unknown>;
  const berth = (source.berth ?? {}) as {
    categories?: Record<string, unknown>;
    task_source?: Record<string, unknown>;
  };
  const own = berth.categories ?? (source.categories as Record<string, unknown> | undefined) ?? {};
  return Object.fromEntries(
    keys.map((key) => {
      let value = own[key] ?? metadata[key] ?? source[key];
      if (key === 'repository' && (value === undefined || value === null))
        value =
          berth.task_source?.repository ??
          repositoryFromTaskName(
            typeof source.task_name === 'string'
              ? source.task_name
              : typeof source.instance_id === 'string'
                ? source.instance_id
                : null,
          ) ??
          undefined;
      return [key, value === undefined || value === null ? undefined : String(value)];
    }),
  );
}

export async function readCategoryRows(jobDir: string, keys: readonly string[]): Promise<CategoryRow[]> {
  const jobFile = join(jobDir, 'result.json');
  const notAJob = (why: string) =>
    new InputError(
      { file: jobDir },
      `not a job folder (${why}); give the folder berth run wrote, <jobs-dir>/<job-name>`,
    );
  const job = (await readJson(jobFile).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    if (error.code === 'ENOTDIR') throw notAJob('it is a file');
    throw error;
  })) as
    | { trials?: Array<Record<string, unknown>>; berth?: { trials?: Array<Record<string, unknown>> } }
    | undefined;
  // `berth multilingual run` keeps each trial's categories in the job's rows (under `berth`, at
  // the top level before); `berth run` does not.
  const jobRows = job?.berth?.trials ?? job?.trials;
  if (
    Array.isArray(jobRows) &&
    jobRows.length > 0 &&
    jobRows.every((trial) => typeof trial === 'object' && trial !== null && 'categories' in trial)
  ) {
    return jobRows.map((trial) => ({
      categories: pick(trial, keys),
      reward: typeof trial.reward === 'number' ? trial.reward : undefined,
    }));
  }
  const entries = await readdir(jobDir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    throw notAJob(error.code === 'ENOENT' ? 'it does not exist' : error.message);
  });
  const rows: CategoryRow[] = [];
  let trials = 0;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const file = join(jobDir, entry.name, 'result.json');
    // A trial folder without a result yet is skipped; a damaged result is an error, not a zero.
    const trial = (await readJson(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    })) as Record<string, unknown> | undefined;
    if (trial === undefined) continue;
    trials++;
    if (typeof trial !== 'object' || trial === null || Array.isArray(trial))
      throw new InputError({ file }, 'not a trial result (a JSON object was expected)');
    const rewards = (trial.verifier_result as { rewards?: Record<string, unknown> } | null | undefined)
      ?.rewards;
    rows.push({
      categories: pick(trial, keys),
      reward: typeof rewards?.reward === 'number' ? rewards.reward : undefined,
    });
  }
  if (job === undefined && trials === 0)
    throw notAJob('no result.json, and no trial folder with a result.json');
  return rows;
}
