/**
 * CPU seconds (user + system) of a whole command: every process it starts, however each ends (a
 * sandbox's processes are killed, not waited for, so the kernel's children's times miss them).
 * Counted by `perf stat -e task-clock`, whose counter every descendant inherits; NaN where perf is
 * missing. Unlike wall time, hardly changed by other people's load on a shared machine, so the
 * benches print both.
 */
import { type ExecFileOptions, execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const perf = (() => {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Runs `command args` to the end (throws as execFile does); resolves to its CPU seconds. */
export async function runCounted(command: string, args: string[], options: ExecFileOptions): Promise<number> {
  if (!perf) {
    await run(command, args, options);
    return Number.NaN;
  }
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-cpu-'));
  try {
    const out = join(dir, 'perf.csv');
    await run('perf', ['stat', '-x', ',', '-e', 'task-clock', '-o', out, '--', command, ...args], options);
    // CSV line: <msec>,msec,task-clock,...
    const line = (await readFile(out, 'utf8')).split('\n').find((l) => l.includes('task-clock'));
    return line ? Number(line.split(',')[0]) / 1000 : Number.NaN;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
