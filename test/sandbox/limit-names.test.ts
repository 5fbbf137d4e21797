/**
 * A memory-limit kill is named for its cause where the sandbox can tell it (src/sandbox/limits.ts
 * limitsHit): the local sandbox's writable folder is a tmpfs charged to the command's memory, so
 * with the default limits (memory 4096 MiB < storage 10240 MiB) a disk filler and a fork bomb in
 * the agent were both AgentOutOfMemoryError. Real `berth run -a command` trials on the sample,
 * with the limits scaled down (memory below storage, as by default).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cgroupSupport } from '../../src/sandbox/cgroup.ts';
import { limitsHit } from '../../src/sandbox/limits.ts';
import { FORK_BOMB, MEMORY_HOG } from '../helpers/bombs.ts';
import { berth, sample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const MiB = 1024 * 1024;

describe('limitsHit names a memory-limit kill for its cause', () => {
  const oom = { pidsRefused: 0, oomKills: 1 };
  it('files in the in-memory writable folder: disk; many small processes: processes; else memory', () => {
    expect(
      limitsHit({ exitCode: 137, stats: oom, writtenBytes: 200 * MiB, memoryLimitBytes: 256 * MiB }),
    ).toEqual(['disk']);
    expect(
      limitsHit({
        exitCode: 137,
        stats: { ...oom, peakProcesses: 154, peakMemoryBytes: 128 * MiB },
        writtenBytes: MiB,
        memoryLimitBytes: 128 * MiB,
      }),
    ).toEqual(['processes']);
    // A few big processes (a JVM's threads, a test runner's workers): out of memory.
    expect(
      limitsHit({ exitCode: 137, stats: { ...oom, peakProcesses: 40, peakMemoryBytes: 512 * MiB } }),
    ).toEqual(['memory']);
    expect(
      limitsHit({ exitCode: 137, stats: oom, writtenBytes: 10 * MiB, memoryLimitBytes: 256 * MiB }),
    ).toEqual(['memory']);
    // A refused fork is the process limit whatever else was hit.
    expect(limitsHit({ exitCode: 137, stats: { pidsRefused: 3, oomKills: 1 } })).toEqual([
      'processes',
      'memory',
    ]);
  });
});

describe('berth run -a command (local): the agent phase error names what was hit', () => {
  const run = async (name: string, command: string, memoryMb: number): Promise<string | undefined> => {
    const jobs = await temp.make('berth-ux-limits-');
    const result = berth([
      'run',
      '-p',
      sample,
      '-i',
      'berth__csvline-1',
      '-a',
      'command',
      '--agent-command',
      command,
      '--override-memory-mb',
      String(memoryMb),
      '--override-storage-mb',
      '1024',
      '--agent-timeout',
      '120',
      '--jobs-dir',
      jobs,
      '--job-name',
      name,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const trial = JSON.parse(readFileSync(join(jobs, name, 'berth__csvline-1__1', 'result.json'), 'utf8'));
    expect(trial.berth.status).toBe('error');
    return trial.exception_info?.exception_type;
  };
  const skipUnlessLimited = (ctx: { skip: (why: string) => void }) => {
    if (!cgroupSupport().version) ctx.skip('no cgroups here: memory kills are not counted');
    if (process.getuid?.() !== 0) ctx.skip('not root: the trial folder is not a size-capped tmpfs');
  };

  it('a disk filler (800 MiB of files, memory 256 MiB, storage 1024 MiB): AgentDiskLimitError', async (ctx) => {
    skipUnlessLimited(ctx);
    const filler = 'for i in 1 2 3 4 5 6 7 8; do head -c 104857600 /dev/zero > .git/fill.$i || break; done';
    // Was AgentOutOfMemoryError: the tmpfs's pages were the memory that ran out.
    expect(await run('disk', filler, 256)).toBe('AgentDiskLimitError');
  });

  it('a fork bomb under the default process limit (4096), memory 128 MiB: AgentProcessLimitError', async (ctx) => {
    skipUnlessLimited(ctx);
    expect(await run('fork', FORK_BOMB, 128)).toBe('AgentProcessLimitError');
  });

  it('a memory hog stays AgentOutOfMemoryError', async (ctx) => {
    skipUnlessLimited(ctx);
    expect(await run('hog', MEMORY_HOG, 128)).toBe('AgentOutOfMemoryError');
  });
});
