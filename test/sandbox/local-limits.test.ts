/**
 * Bounded bombs in a local environment: a fork bomb, a memory hog, a disk filler, a file past the
 * file-size limit, a CPU spinner and a flood of output, each under small limits, as an untrusted
 * command and as the dataset's set-up command. Each is stopped at its limit, reported in
 * `limitsHit`, and leaves the host as it was: free pids, memory and disk, no process, cgroup or
 * mount left behind.
 */
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecOptions } from '../../src/environments/environment.ts';
import { type LocalEnvironment, LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { cappedFolderSupport } from '../../src/sandbox/capped-folder.ts';
import { cgroupSupport } from '../../src/sandbox/cgroup.ts';
import { isRoot } from '../../src/sandbox/identity.ts';
import { type LimitRequest, MiB } from '../../src/sandbox/limits.ts';
import { hostFree, leftoversOf, processesWith } from '../helpers/host.ts';
import { shellTask } from '../trials/shell-task.ts';

const SMALL: LimitRequest = {
  processes: 64,
  memoryBytes: 128 * MiB,
  writableBytes: 64 * MiB,
  fileSizeBytes: 16 * MiB,
  outputBytes: 256 * 1024,
};

const started: LocalEnvironment[] = [];
afterAll(async () => {
  for (const env of started) await env.stop();
});

async function start(limits: LimitRequest = SMALL): Promise<LocalEnvironment> {
  const env = await new LocalEnvironmentProvider({ limits }).start({
    task: await shellTask({ name: 'limits-test' }),
    jobId: 'limits-test',
    trialDir: tmpdir(),
  });
  started.push(env);
  return env;
}

const phases: { name: string; options: ExecOptions }[] = [
  { name: 'untrusted command', options: {} },
  { name: 'set-up command', options: { setup: true } },
];

describe.each(phases)('local limits: $name', ({ options }) => {
  it('a fork bomb stops at the process limit', async (ctx) => {
    if (!cgroupSupport().version && (options.setup || !isRoot)) ctx.skip(); // RLIMIT_NPROC does not bind root: no process limit for set-up commands without cgroups
    const before = hostFree();
    const env = await start();
    const token = `berth-fork-bomb-${process.pid}-${Date.now()}`;
    const run = await env.exec(
      `python3 -c "
# ${token}
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    print('refused after', n, e.errno)
"`,
      { ...options, timeoutSec: 20 },
    );
    expect(run.output).toMatch(/refused after \d+ 11/);
    const forks = Number(/refused after (\d+)/.exec(run.output)?.[1]);
    expect(forks).toBeLessThan(64);
    if (cgroupSupport().version) expect(run.limitsHit).toContain('processes');
    expect(await env.limits.takeHits()).toEqual(run.limitsHit);
    // Nothing of the bomb survives its command, and the host still has its pids (others share it).
    expect(processesWith(token)).toEqual([]);
    expect(hostFree().pids).toBeGreaterThan(before.pids - 1000);
  });

  it('a memory hog is killed at the memory limit', async (ctx) => {
    if (!cgroupSupport().version) ctx.skip(); // RLIMIT_DATA turns it into a MemoryError instead
    const env = await start();
    const run = await env.exec(`python3 -c "a = bytearray(512 * 1024 * 1024); print('allocated')"`, {
      ...options,
      timeoutSec: 30,
    });
    expect(run.output).not.toContain('allocated');
    expect(run.oomKilled).toBe(true);
    expect(run.limitsHit).toContain('memory');
  });

  it('a disk filler stops when the writable folder is full', async (ctx) => {
    if ((await cappedFolderSupport()) !== undefined) ctx.skip();
    const before = hostFree();
    const env = await start();
    const run = await env.exec(
      // The bytes written (not `du .`: on an install-cache overlay that counts the entry's files too).
      'for i in $(seq 1 20); do head -c 8388608 /dev/zero > fill.$i || { echo full at $i; break; }; done; cat fill.* | wc -c',
      { ...options, timeoutSec: 30 },
    );
    expect(run.output).toMatch(/full at \d+/);
    expect(Number(run.output.trim().split('\n').at(-1))).toBeLessThanOrEqual(64 * MiB);
    expect(run.limitsHit).toContain('disk');
    expect(hostFree().diskBytes).toBeGreaterThan(before.diskBytes - 100 * MiB);
  });

  it('a file past the file-size limit is cut there (SIGXFSZ)', async () => {
    const env = await start();
    const run = await env.exec('head -c 33554432 /dev/zero > big; echo status $?; stat -c %s big', {
      ...options,
      timeoutSec: 30,
    });
    expect(run.output).toMatch(/status 153\n16777216\n/);
    // The shell survived the signal of its child: the exit code tells, not the command's end.
    expect(run.exitCode).toBe(0);
  });

  it('a CPU spinner gets SIGXCPU at its CPU time', async () => {
    const env = await start({ ...SMALL, cpuSec: 1 });
    const run = await env.exec('exec python3 -c "while True: pass"', { ...options, timeoutSec: 30 });
    expect(run.durationSec).toBeLessThan(10);
    expect(run.limitsHit).toContain('cpu-time');
  });

  it('a flood of output is cut at the output cap', async () => {
    const env = await start();
    const run = await env.exec('head -c 104857600 /dev/zero | tr "\\0" x', { ...options, timeoutSec: 30 });
    expect(run.truncated).toBe(true);
    expect(run.output.length).toBeLessThan(300 * 1024);
    expect(run.limitsHit).toContain('output');
  });
});

describe('local limits: a command cannot undo them', () => {
  it('leaving its cgroup, raising a hard limit, mounting a bigger /tmp all fail', async (ctx) => {
    const env = await start();
    if (!env.isolationMethodName || !isRoot) ctx.skip(); // as its own unprivileged uid only
    const dirs = Object.values(cgroupSupport().dirs);
    const escapes = dirs.map((d) => `echo $$ > ${d}/cgroup.procs 2>/dev/null; echo "escape $?"`);
    const run = await env.exec(
      [
        ...escapes,
        'ulimit -H -f unlimited 2>/dev/null; echo "raise $?"',
        'ulimit -H -u 100000 2>/dev/null; echo "raise $?"',
        'mount -t tmpfs -o size=10g berth-x /tmp 2>/dev/null; echo "mount $?"',
        'cat /proc/self/cgroup',
      ].join('\n'),
      { timeoutSec: 30 },
    );
    expect(run.output).not.toMatch(/(escape|raise|mount) 0\n/);
    if (cgroupSupport().version === 'v1') expect(run.output).toContain(`berth-${process.pid}-`);
  });
});

describe('local limits: the record and what is left', () => {
  // With a cgroup the group's root shell sets these with `ulimit` (no prlimit program); a file
  // size that is not whole 512-byte blocks goes through prlimit. Either way, the same values.
  it.each([16 * MiB, 16 * MiB + 1])(
    'a command gets the file-size (%i bytes), CPU-time and core limits asked for, hard and soft',
    async (fileSizeBytes) => {
      const env = await start({ ...SMALL, fileSizeBytes, cpuSec: 90 });
      const run = await env.exec('cat /proc/self/limits', { timeoutSec: 30 });
      const limit = (name: string) =>
        new RegExp(`^${name}\\s+(\\S+)\\s+(\\S+)`, 'm').exec(run.output)?.slice(1, 3);
      expect(limit('Max file size')).toEqual([String(fileSizeBytes), String(fileSizeBytes)]);
      expect(limit('Max cpu time')).toEqual(['90', '91']);
      expect(limit('Max core file size')).toEqual(['0', '0']);
    },
  );

  it('says how each limit is enforced here', async () => {
    const env = await start();
    const record = env.limits.record;
    expect(record.processes).toBe(64);
    expect(record.memory_bytes).toBe(128 * MiB);
    expect(record.disk_bytes).toBe(64 * MiB);
    const cg = cgroupSupport().version;
    expect(record.enforced_by.memory).toBe(cg ? `cgroup-${cg}` : 'rlimit');
    expect(record.enforced_by.disk).toBe((await cappedFolderSupport()) === undefined ? 'tmpfs' : 'none');
    if (env.isolationMethodName === 'bwrap') {
      // The private /tmp, and bwrap's /dev/shm (else half the host's memory), are capped.
      const df = await env.exec('df -k /tmp /dev/shm | tail -2');
      const sizes = df.output
        .trim()
        .split('\n')
        .map((l) => Number(l.split(/\s+/)[1]));
      expect(sizes).toEqual([64 * 1024, 64 * 1024]);
    }
  });

  it('a CPU quota (cpus) slows a spinner to its share', async (ctx) => {
    if (!cgroupSupport().dirs.cpu) ctx.skip();
    const env = await start({ ...SMALL, cpus: 0.25 });
    // Two seconds of wall time at a quarter of a core: about half a second of CPU.
    const run = await env.exec(
      `python3 -c "
import time, os
end = time.time() + 2
while time.time() < end: pass
print(os.times().user + os.times().system)"`,
      { timeoutSec: 30 },
    );
    expect(Number(run.output.trim())).toBeLessThan(1);
    expect(env.limits.record.enforced_by.cpus).toMatch(/^cgroup/);
  });

  it('leaves no cgroup, mount or process behind once stopped', async () => {
    const env = await start();
    await env.exec('sleep 60 & sleep 60 & echo started', { timeoutSec: 1 });
    for (const e of started.splice(0)) await e.stop();
    expect(leftoversOf(process.pid)).toEqual([]);
  });
});
