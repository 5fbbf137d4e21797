/**
 * Step timings for finding where wall time goes: with `BERTH_TRACE=1` in the environment,
 * `traced` prints `[berth trace] <label> <ms> ms` to stderr when a step ends (milliseconds of
 * wall time, from `performance.now()`). Off by default: then it only runs the step.
 */
const enabled = process.env.BERTH_TRACE === '1';

/** Runs `step`; with `BERTH_TRACE=1`, prints its wall time (ms) under `label` to stderr. */
export async function traced<T>(label: string, step: () => Promise<T>): Promise<T> {
  if (!enabled) return step();
  const started = performance.now();
  try {
    return await step();
  } finally {
    process.stderr.write(`[berth trace] ${label} ${(performance.now() - started).toFixed(1)} ms\n`);
  }
}

/** Whether `BERTH_TRACE=1` was set when berth started. */
export const tracing = enabled;
