/**
 * Results grouped by category: the multilingual demo reports by task type
 * (BF, FE, FI, RF, TG, CD) and by language. Works on any rows that carry the
 * category fields and a reward; a missing reward counts as 0 (Harbor's mean).
 */
import { shellQuote } from '../util/shell.ts';

/** One finished trial, as far as this report needs it. */
export interface CategoryRow {
  /** Category values by key, e.g. `{ task_type: 'BF', language: 'go' }`. */
  categories: Record<string, string | undefined>;
  /** The trial's reward; undefined when it crashed before one was produced. */
  reward?: number;
}

export interface CategoryGroup {
  key: string;
  value: string;
  trials: number;
  /** Trials with reward >= 1. */
  resolved: number;
  /** Mean reward, missing rewards counted as 0. */
  meanReward: number;
}

/** Groups rows by each of `keys` in turn; groups sorted by key order, then value. */
export function groupByCategory(rows: readonly CategoryRow[], keys: readonly string[]): CategoryGroup[] {
  const groups: CategoryGroup[] = [];
  for (const key of keys) {
    const byValue = new Map<string, { trials: number; resolved: number; sum: number }>();
    for (const row of rows) {
      const value = row.categories[key] ?? '(none)';
      const group = byValue.get(value) ?? { trials: 0, resolved: 0, sum: 0 };
      group.trials += 1;
      group.sum += row.reward ?? 0;
      if ((row.reward ?? 0) >= 1) group.resolved += 1;
      byValue.set(value, group);
    }
    for (const [value, group] of [...byValue].sort(([a], [b]) => a.localeCompare(b))) {
      groups.push({
        key,
        value,
        trials: group.trials,
        resolved: group.resolved,
        meanReward: group.sum / group.trials,
      });
    }
  }
  return groups;
}

/** A plain-text table: one block per key, with a total line. */
export function formatCategoryReport(rows: readonly CategoryRow[], keys: readonly string[]): string {
  const groups = groupByCategory(rows, keys);
  const lines: string[] = [];
  for (const key of keys) {
    const own = groups.filter((group) => group.key === key);
    const width = Math.max(key.length, ...own.map((group) => group.value.length));
    lines.push(`${key.padEnd(width)}  resolved   rate`);
    for (const group of own) {
      const rate = ((100 * group.resolved) / group.trials).toFixed(1);
      lines.push(
        `${group.value.padEnd(width)}  ${`${group.resolved}/${group.trials}`.padStart(8)}  ${rate.padStart(5)}%`,
      );
    }
    lines.push('');
  }
  const resolved = rows.filter((row) => (row.reward ?? 0) >= 1).length;
  const rate = rows.length === 0 ? '0.0' : ((100 * resolved) / rows.length).toFixed(1);
  lines.push(`total  resolved ${resolved}/${rows.length} (${rate}%)`);
  return `${lines.join('\n')}\n`;
}

/** One job's rows, as `berth report` reads them: the job's folder, its agent and model. */
export interface JobCategoryRows {
  /** The job folder's name. */
  job: string;
  /** The folder as given on the command line. */
  dir: string;
  agent: string | null;
  model: string | null;
  rows: readonly CategoryRow[];
}

/** A group of one job (`berth report --json`): the job it belongs to, then the group. */
export interface JobCategoryGroup extends CategoryGroup {
  job: string;
  agent: string | null;
  model: string | null;
}

/** Each job's groups in turn: jobs are never pooled (two agents in one table would hide which is which). */
export function groupJobsByCategory(
  jobs: readonly JobCategoryRows[],
  keys: readonly string[],
): JobCategoryGroup[] {
  return jobs.flatMap(({ job, agent, model, rows }) =>
    groupByCategory(rows, keys).map((group) => ({ job, agent, model, ...group })),
  );
}

/**
 * The plain-text report of one or more jobs: one job gives `formatCategoryReport`'s table; several
 * give a section per job, headed by its name, agent and model, and a last line that points at
 * `berth compare` for comparing them.
 */
export function formatJobsByCategory(jobs: readonly JobCategoryRows[], keys: readonly string[]): string {
  const [only] = jobs;
  if (jobs.length === 1 && only) return formatCategoryReport(only.rows, keys);
  const sections = jobs.map(
    ({ job, agent, model, rows }) =>
      `job ${job} (agent ${agent ?? '-'}, model ${model ?? '-'})\n${formatCategoryReport(rows, keys)}`,
  );
  const who = new Set(jobs.map(({ agent, model }) => `${agent ?? '-'}/${model ?? '-'}`));
  return `${sections.join('\n')}\n${jobs.length} jobs, each reported on its own${
    who.size > 1 ? ' (they ran different agents or models)' : ''
  }; to compare them: berth compare ${jobs.map(({ dir }) => shellQuote(dir)).join(' ')}\n`;
}
