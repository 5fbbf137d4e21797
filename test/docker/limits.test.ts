/**
 * Resource limits in containers (src/environments/docker/limits.ts), on the real engine: bounded
 * fork and memory bombs in each phase of a Harbor trial (agent set-up, agent, verifier) are
 * recorded as that phase's error; CPU time and file size bind every command; the writable layer
 * past storage_mb is the phase's disk error; output is capped; the pids limit keeps `-n`
 * containers within the host's budget. Nothing is left running afterwards.
 */
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { CommandAgent } from '../../src/agents/command.ts';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { hostPidMax, type LimitRequest, MiB } from '../../src/sandbox/limits.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import type { Task } from '../../src/tasks/task.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { HarborVerifier } from '../../src/verifiers/harbor.ts';
import { FORK_BOMB, MEMORY_HOG } from '../helpers/bombs.ts';
import { FIXTURES, fixtureImageMap, JOB_ID, skipDocker, tempDir } from './helpers.ts';

const calcDir = join(FIXTURES, 'tasks', 'calc');
const SMALL: LimitRequest = { processes: 64, memoryBytes: 128 * MiB, writableBytes: 64 * MiB };

/** A copy of the calc task with some files replaced. */
function variant(files: Record<string, string> = {}): Task {
  const dir = join(tempDir('berth-limits-task-'), 'calc');
  cpSync(calcDir, dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  return loadHarborTask(dir);
}

async function trial(task: Task, agent: Agent, limits: LimitRequest = SMALL): Promise<TrialResult> {
  const provider = new DockerEnvironmentProvider({ imageMap: fixtureImageMap(), limits });
  return runTrial({
    task,
    agent,
    attempt: 1,
    trialName: 'limits__1',
    trialDir: join(tempDir('berth-limits-trial-'), 'trial'),
    jobId: JOB_ID,
    source: 'inline',
    providers: [provider],
    verifiers: [new HarborVerifier()],
  });
}

/** Containers of this test process's job still there. */
async function leftoverContainers(): Promise<string[]> {
  const { docker } = await connectDocker();
  const list = await docker.listContainers({ all: true, filters: { label: [`berth.job=${JOB_ID}`] } });
  return list.map((c) => c.Id);
}

describe.skipIf(skipDocker)('container limits (real engine)', () => {
  describe.each([
    { bomb: 'fork bomb', command: FORK_BOMB, limit: 'ProcessLimitError' },
    { bomb: 'memory hog', command: MEMORY_HOG, limit: 'OutOfMemoryError' },
  ])('a $bomb in each phase', ({ command, limit }) => {
    it('agent set-up', async () => {
      const result = await trial(variant(), new CommandAgent({ command: 'true', setup: command }));
      expect(result.exception_info?.exception_type).toBe(`AgentSetup${limit}`);
      expect(result.verifier).toBeNull();
    });

    it('agent (the command agent and the oracle alike)', async () => {
      const result = await trial(variant(), new CommandAgent({ command }));
      expect(result.exception_info?.exception_type).toBe(`Agent${limit}`);
      const oracle = await trial(
        variant({ 'solution/solve.sh': `#!/bin/bash\n${command}\n` }),
        new ScriptOracleAgent(),
      );
      expect(oracle.exception_info?.exception_type).toBe(`Agent${limit}`);
      expect(oracle.berth.status).toBe('error');
    });

    it('verifier', async () => {
      const result = await trial(
        variant({ 'tests/test.sh': `#!/bin/bash\n${command}\necho 1 > /logs/verifier/reward.txt\n` }),
        new ScriptOracleAgent(),
      );
      expect(result.exception_info?.exception_type).toBe(`Verifier${limit}`);
      expect(result.berth.resolved).toBe(false);
      expect(result.exception_info?.exception_traceback).not.toMatch(/\n\s+at /);
    });
  });

  it('CPU time and file size bind every command, and the container cannot raise them', async () => {
    const agent = new CommandAgent({
      command: [
        'head -c 33554432 /dev/zero > /tmp/big; echo "fsize status $?"; stat -c %s /tmp/big',
        'ulimit -H -f unlimited 2>&1',
        'exec python3 -c "while True: pass"',
      ].join('\n'),
    });
    const result = await trial(variant(), agent, { ...SMALL, fileSizeBytes: 16 * MiB, cpuSec: 1 });
    const out = readFileSync(
      join(new URL(result.trial_uri).pathname, 'agent', 'command', 'stdout.txt'),
      'utf8',
    );
    expect(out).toMatch(/fsize status 153\n16777216\n/);
    // The hard limits cannot be raised from inside (no CAP_SYS_RESOURCE).
    expect(out).toMatch(/cannot modify limit/);
    // The command ended by SIGXCPU: the agent phase's CPU-time error.
    expect(result.exception_info?.exception_type).toBe('AgentCpuTimeLimitError');
    expect(result.berth.limits?.enforced_by).toMatchObject({ processes: 'docker', cpu_time: 'rlimit' });
  });

  it('a writable layer past storage_mb is the phase error', async () => {
    const agent = new CommandAgent({
      command:
        'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do head -c 8388608 /dev/zero > /var/tmp/fill.$i; done; echo filled',
    });
    const result = await trial(variant(), agent);
    expect(['storage-opt', 'watch']).toContain(result.berth.limits?.enforced_by.disk);
    expect(result.exception_info?.exception_type).toBe('AgentDiskLimitError');
  });

  it('a test that writes 300 MiB into /logs/verifier leaves at most the copy cap in the jobs folder', async () => {
    const result = await trial(
      variant({ 'tests/test.sh': '#!/bin/bash\nhead -c 314572800 /dev/zero > /logs/verifier/big.bin\n' }),
      new ScriptOracleAgent(),
      { ...SMALL, writableBytes: 1024 * MiB, memoryBytes: 512 * MiB },
    );
    const dir = join(new URL(result.trial_uri).pathname, 'verifier');
    const total = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(total).toBeLessThanOrEqual(256 * MiB);
    expect(result.berth.resolved).toBe(false);
  });

  it("output is capped as on local: the limits' outputBytes, the same mark, read to its end", async () => {
    const task = variant();
    const provider = new DockerEnvironmentProvider({
      imageMap: fixtureImageMap(),
      limits: { ...SMALL, outputBytes: 256 * 1024 },
    });
    const env = await provider.start({ task, jobId: JOB_ID, trialDir: tempDir('berth-limits-out-') });
    try {
      // 8 MiB, then a line after the flood: the command runs to its end, the rest is dropped.
      const run = await env.exec('head -c 8388608 /dev/zero | tr "\\0" x; echo; echo done-after-flood', {
        timeoutSec: 60,
      });
      expect(run.exitCode).toBe(0);
      expect(run.truncated).toBe(true);
      expect(run.output.length).toBeLessThan(300 * 1024);
      expect(run.output).toMatch(/\[berth: output truncated at 262144 bytes; \d+ more bytes dropped\]\n$/);
      expect(run.output).not.toContain('done-after-flood');
      expect(run.limitsHit).toContain('output');
    } finally {
      await env.stop();
    }
  });

  it('the pids limit keeps -n containers within half of the host pids; 4 GiB memory by default', async () => {
    const { docker } = await connectDocker();
    const task = variant();
    if (task.environment.kind === 'docker') delete task.environment.memoryMb;
    const provider = new DockerEnvironmentProvider({ imageMap: fixtureImageMap(), concurrency: 64 });
    const env = await provider.start({ task, jobId: JOB_ID, trialDir: tempDir('berth-limits-n-') });
    try {
      const inspected = await docker.getContainer((env as unknown as { id: string }).id).inspect();
      expect(inspected.HostConfig.PidsLimit).toBe(Math.max(64, Math.floor(hostPidMax() / 128)));
      expect(inspected.HostConfig.Memory).toBe(4096 * MiB);
      expect(inspected.HostConfig.MemorySwap).toBe(4096 * MiB);
    } finally {
      await env.stop();
    }
    expect(await leftoverContainers()).toEqual([]);
    // The host still has room: fewer than half its pids in use.
    expect(readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length).toBeLessThan(hostPidMax() / 2);
  });
});
