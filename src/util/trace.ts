/**
 * A debug trace of the wall time of berth's steps (issues 10 and 18: where a trial's time goes).
 * Off unless `BERTH_TRACE` is set: `BERTH_TRACE=1` writes one line per step to stderr,
 * `BERTH_TRACE=/abs/file` appends them to that file (a bench's trials, whose stderr is not shown).
 * A line: `berth-trace <start ms> <duration ms> <label>`, the start in milliseconds since this
 * process began (`performance.now()`), so concurrent steps show as overlapping intervals.
 * One facility for every part of berth: the environment, the verifier, the engine.
 */
import { appendFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';

const setting = process.env.BERTH_TRACE;

/** Whether steps are traced (`BERTH_TRACE` set to `1` or an absolute file path). */
export const tracing = setting === '1' || (setting !== undefined && isAbsolute(setting));

function write(line: string): void {
  try {
    if (setting === '1') process.stderr.write(`${line}\n`);
    else appendFileSync(setting as string, `${line}\n`);
  } catch {
    // A trace never fails what it traces.
  }
}

/** Records the step `label` that started at `start` (a `performance.now()` value) and ends now. */
export function traceSince(label: string, start: number): void {
  if (!tracing) return;
  const end = performance.now();
  write(`berth-trace ${start.toFixed(1)} ${(end - start).toFixed(1)} ${label}`);
}

/**
 * Runs `work` as the traced step `label`: its wall time is written when it settles (failures
 * included, marked `!`). Without tracing, just `work()`.
 */
export async function traced<T>(label: string, work: () => Promise<T>): Promise<T> {
  if (!tracing) return work();
  const start = performance.now();
  try {
    const value = await work();
    traceSince(label, start);
    return value;
  } catch (error) {
    traceSince(`${label} !`, start);
    throw error;
  }
}
