/**
 * Step timings for finding where wall time goes: with `BERTH_TRACE=1` in the environment,
 * `traced` prints `[berth trace] <label> <wall> ms cpu <self> ms children <children> ms` to
 * stderr when a step ends: its wall time (`performance.now()`), berth's own CPU time over it
 * (`process.cpuUsage`) and the CPU time of the child processes that ended during it and were
 * waited for (`cutime` + `cstime` of /proc/self/stat, in clock ticks of 10 ms: a sum over
 * many steps means more than one). Off by default: then it only runs the step.
 */
import { readFileSync } from 'node:fs';

const enabled = process.env.BERTH_TRACE === '1';

/** CPU milliseconds of the children waited for so far (Linux; 0 elsewhere). */
function childrenMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // cutime and cstime are fields 16 and 17 of proc(5), 14 and 15 here (from 3).
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

/** Runs `step`; with `BERTH_TRACE=1`, prints its wall and CPU time (ms) under `label` to stderr. */
export async function traced<T>(label: string, step: () => Promise<T>): Promise<T> {
  if (!enabled) return step();
  const started = performance.now();
  const cpu = process.cpuUsage();
  const children = childrenMs();
  try {
    return await step();
  } finally {
    const self = process.cpuUsage(cpu);
    process.stderr.write(
      `[berth trace] ${label} ${(performance.now() - started).toFixed(1)} ms cpu ${((self.user + self.system) / 1000).toFixed(1)} ms children ${childrenMs() - children} ms\n`,
    );
  }
}

/** Whether `BERTH_TRACE=1` was set when berth started. */
export const tracing = enabled;
