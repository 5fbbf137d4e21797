/** Job and trial names (no dependency beyond node: `berth eval` loads this at start-up). */
import { randomBytes } from 'node:crypto';

/**
 * The default job name: Harbor's `YYYY-MM-DD__HH-MM-SS` (local time) plus a short random
 * suffix (`-` and 4 hex digits), so two runs started in the same second get different folders.
 */
export function defaultJobName(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}__${p(date.getHours())}-${p(date.getMinutes())}-${p(date.getSeconds())}-${randomBytes(2).toString('hex')}`;
}

/** A file-system-safe trial folder name. */
export function trialNameFor(taskName: string, attempt: number): string {
  const safe = taskName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
  return `${safe}__${attempt}`;
}
