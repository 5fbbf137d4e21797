/**
 * The job folder's lock: one berth process runs a job at a time. The lock file names its
 * holder by pid and process start time, so a stale lock (a dead holder, or a pid reused by
 * another process) is taken over, never waited for.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.ts';
import { processStartTime } from '../sandbox/cgroup.ts';
import { processAlive } from '../sandbox/identity.ts';

/**
 * The process holding a job folder's lock, from the lock file's text (`pid start-time`): its pid
 * when that process is running and started at the recorded time (a lock written before the start
 * time was recorded holds only the pid: trusted), else undefined (a stale lock). The viewer uses
 * it to tell a running job from one a crash left behind.
 */
export async function lockHolder(text: string): Promise<number | undefined> {
  const [pidText = '', startText] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (pidText === '' || !Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return undefined;
  const start = startText === undefined ? undefined : processStartTime(pid);
  return start === undefined || start === startText ? pid : undefined;
}

/**
 * Takes the job folder's lock (`.berth.lock`, created exclusively, holding `pid start-time`,
 * see src/sandbox/cgroup.ts `processStartTime`). A lock whose pid is no longer running, or is
 * running but started at another time (the pid was reused by an unrelated process), is stale
 * and taken over.
 * @returns a function that releases the lock.
 * @throws UsageError when another running process holds the lock.
 */
export async function lockJobDir(
  jobDir: string,
  jobName: string,
  /** The refusal when a running process holds the lock (default: the job is being run). */
  busy: (pid: number) => string = (pid) =>
    `job ${jobName} is being run by another berth process (pid ${pid}); wait for it, or use another --job-name`,
): Promise<() => Promise<void>> {
  await mkdir(jobDir, { recursive: true });
  const lock = join(jobDir, '.berth.lock');
  const ownStart = processStartTime(process.pid);
  const own = `${process.pid}${ownStart !== undefined ? ` ${ownStart}` : ''}`;
  for (let tries = 0; tries < 5; tries++) {
    try {
      await writeFile(lock, `${own}\n`, { flag: 'wx' });
      return async () => {
        const holder = await readFile(lock, 'utf8').catch(() => '');
        if (holder.trim() === own) await rm(lock, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(lock, 'utf8').catch(() => undefined);
    if (text === undefined) continue; // released meanwhile
    const pid = await lockHolder(text);
    if (pid !== undefined && pid !== process.pid) {
      throw new UsageError(busy(pid));
    }
    // An empty lock may be one being written right now: give its writer a moment.
    if (text.trim() === '' && tries === 0) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    await rm(lock, { force: true });
  }
  throw new UsageError(`job ${jobName}: could not take the lock ${lock}`);
}
