/**
 * Results grouped by category: the multilingual demo reports by task type
 * (BF, FE, FI, RF, TG, CD) and by language. Works on any rows that carry the
 * category fields and a reward; a missing reward counts as 0 (Harbor's mean).
 */

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
