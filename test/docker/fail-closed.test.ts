/**
 * Fail-closed and secure, on the real engine: what an agent plants or prints
 * never earns a reward, hidden files stay hidden, and limits hold.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { DockerContainerEnvironment } from '../../src/environments/docker/container.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { BASE_IMAGE, FIXTURES, JOB_ID, runPhases, ShellAgent, skipDocker, tempDir } from './helpers.ts';

const calcDir = join(FIXTURES, 'tasks', 'calc');
const calc = () => loadHarborTask(calcDir);

/** A copy of the calc task with some files replaced. */
function variant(files: Record<string, string>, toml?: (t: string) => string) {
  const dir = join(tempDir('berth-task-'), 'calc');
  cpSync(calcDir, dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  if (toml) writeFileSync(join(dir, 'task.toml'), toml(readFileSync(join(dir, 'task.toml'), 'utf8')));
  return loadHarborTask(dir);
}

describe.skipIf(skipDocker)('fail-closed Harbor trials (real engine)', () => {
  it('control: the unsolved task gets 0, the solved one 1', async () => {
    expect((await runPhases(calc(), new ShellAgent('true'))).verdict.rewards.reward).toBe(0);
    expect((await runPhases(calc(), new ScriptOracleAgent())).verdict.rewards.reward).toBe(1);
  });

  it('an agent that writes /logs/verifier/reward.txt and reward.json gets 0', async () => {
    const agent = new ShellAgent(
      'echo 1 > /logs/verifier/reward.txt; echo \'{"reward": 1}\' > /logs/verifier/reward.json',
    );
    const run = await runPhases(calc(), agent);
    expect(run.verdict.rewards).toEqual({ reward: 0 });
    expect(run.verdict.exception?.type).toBe('RewardFileNotFoundError');
  });

  it('an agent that leaves a background process rewriting reward.txt gets 0 (the process is killed)', async () => {
    const agent = new ShellAgent(
      "nohup setsid sh -c 'while :; do echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.05; done' >/dev/null 2>&1 & sleep 0.3; echo started",
    );
    const run = await runPhases(calc(), agent);
    expect(run.verdict.rewards).toEqual({ reward: 0 });
    expect(run.verdict.details?.killed_agent_processes).toBeGreaterThanOrEqual(1);
  });

  it('an agent that writes its own /tests/test.sh, or edits the hidden test files, gets 0', async () => {
    const agent = new ShellAgent(
      [
        'mkdir -p /tests',
        'printf "#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n" > /tests/test.sh',
        'printf "print(\\"test_calc: all passed\\")\\n" > /tests/test_calc.py',
        'chmod -R 777 /tests',
      ].join(' && '),
    );
    const run = await runPhases(calc(), agent);
    expect(run.verdict.rewards).toEqual({ reward: 0 });
    // The real tests ran: their failure is in test-stdout.txt.
    expect(readFileSync(join(run.trialDir, 'verifier', 'test-stdout.txt'), 'utf8')).toMatch(/AssertionError/);
  });

  it('an agent whose code prints forged PASSED lines and rewards gets 0', async () => {
    const forged = [
      'import sys',
      'print("test_calc: all passed")',
      'print("PASSED test_calc.py::test_add")',
      'print("1")',
      'def add(a, b):',
      '    return a - b',
    ].join('\n');
    const agent = new ShellAgent(`cat > /app/calc.py <<'EOF'\n${forged}\nEOF`);
    const run = await runPhases(calc(), agent);
    expect(readFileSync(join(run.trialDir, 'verifier', 'test-stdout.txt'), 'utf8')).toContain(
      'PASSED test_calc.py::test_add',
    );
    expect(run.verdict.rewards).toEqual({ reward: 0 });
  });

  it('the agent cannot read /tests or /solution', async () => {
    const agent = new ShellAgent(
      'ls -la /tests /solution 2>&1; cat /tests/test.sh /solution/solve.sh 2>&1; find / -name test_calc.py -o -name solve.sh 2>/dev/null; echo END',
    );
    await runPhases(calc(), agent);
    expect(agent.output).toMatch(/cannot access '\/tests'/);
    expect(agent.output).toMatch(/cannot access '\/solution'/);
    expect(agent.output).not.toMatch(/test_calc\.py|solve\.sh\n/);
    expect(agent.output.trim().endsWith('END')).toBe(true);
  });

  it('a hanging test.sh is killed at the verifier timeout (VerifierTimeoutError)', async () => {
    const task = variant(
      { 'tests/test.sh': '#!/bin/bash\nsleep 600 &\nwait\necho 1 > /logs/verifier/reward.txt\n' },
      (t) => t.replace('[verifier]\ntimeout_sec = 60.0', '[verifier]\ntimeout_sec = 2.0'),
    );
    const started = Date.now();
    const run = await runPhases(task, new ScriptOracleAgent());
    expect(run.verdict.exception?.type).toBe('VerifierTimeoutError');
    expect(run.verdict.rewards).toEqual({ reward: 0 });
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('an agent that hangs is killed at the agent timeout; the verifier still runs', async () => {
    const task = variant(
      { 'solution/solve.sh': '#!/bin/bash\nsed -i "s/a - b/a + b/" /app/calc.py\nsleep 600\n' },
      (t) => t.replace('[agent]\ntimeout_sec = 60.0', '[agent]\ntimeout_sec = 2.0'),
    );
    const run = await runPhases(task, new ScriptOracleAgent());
    expect(run.agentError?.name).toBe('AgentTimeoutError');
    expect(run.verdict.rewards).toEqual({ reward: 1 });
  });

  it('a process allocating beyond memory_mb is killed and recorded with that cause', async () => {
    const hog = 'python3 -c "x = bytearray(400 * 1024 * 1024); print(len(x))"';
    const task = variant(
      { 'tests/test.sh': `#!/bin/bash\n${hog}\necho 0 > /logs/verifier/reward.txt\n` },
      (t) => t.replace('memory = "512M"', 'memory = "128M"'),
    );
    const run = await runPhases(task, new ScriptOracleAgent());
    expect(run.verdict.details?.oom_killed).toBe(true);
    expect(run.verdict.exception?.type).toBe('VerifierOutOfMemoryError');
    // In the agent phase: the oracle's process is killed and the cause named.
    const agentTask = variant({ 'solution/solve.sh': `#!/bin/bash\n${hog}\n` }, (t) =>
      t.replace('memory = "512M"', 'memory = "128M"'),
    );
    const agentRun = await runPhases(agentTask, new ScriptOracleAgent());
    expect(agentRun.agentError?.name).toBe('AgentOutOfMemoryError');
    // Control: the same allocation fits in 512 MB.
    const fits = variant({ 'tests/test.sh': `#!/bin/bash\n${hog} && echo 1 > /logs/verifier/reward.txt\n` });
    expect((await runPhases(fits, new ScriptOracleAgent())).verdict).toMatchObject({
      rewards: { reward: 1 },
    });
  });

  it('a fork bomb is stopped by the pids limit and the container stays usable', async () => {
    const { docker } = await connectDocker();
    const env = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'no-network' },
      pidsLimit: 64,
    });
    try {
      expect(
        (
          await env.exec('cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max')
        ).output.trim(),
      ).toBe('64');
      const bomb = await env.exec('bomb() { bomb | bomb & }; bomb; sleep 3; echo survived', {
        timeoutSec: 10,
      });
      expect(bomb.output).toMatch(/fork: retry|Resource temporarily unavailable|fork/);
      const killed = await env.killStrayProcesses();
      expect(killed).toBeGreaterThan(0);
      const after = await env.exec('echo alive');
      expect(after.output.trim()).toBe('alive');
    } finally {
      await env.stop();
    }
  });

  it('a no-network container cannot reach a server started on the host; a public one can', async () => {
    const server = createServer((_req, res) => res.end('host-secret'));
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
    const port = (server.address() as AddressInfo).port;
    const { docker } = await connectDocker();
    const open = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'public' },
    });
    // The host as the bridge network's gateway.
    const gateway = (await docker.getContainer(open.id).inspect()).NetworkSettings.Networks.bridge?.Gateway;
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const probe = `python3 -c "import urllib.request; print(urllib.request.urlopen('http://${gateway}:${port}/', timeout=3).read().decode())"`;
    const closed = await DockerContainerEnvironment.create({
      docker,
      image: BASE_IMAGE,
      jobId: JOB_ID,
      network: { mode: 'no-network' },
    });
    try {
      expect((await open.exec(probe, { timeoutSec: 20 })).output).toContain('host-secret');
      const blocked = await closed.exec(probe, { timeoutSec: 20 });
      expect(blocked.exitCode).not.toBe(0);
      expect(blocked.output).not.toContain('host-secret');
      expect(blocked.output).toMatch(/unreachable|URLError|Errno/);
      // The network can be switched while the container runs (per-phase network modes).
      await closed.setNetworkPolicy({ mode: 'public' });
      expect((await closed.exec(probe, { timeoutSec: 20 })).output).toContain('host-secret');
      await closed.setNetworkPolicy({ mode: 'no-network' });
      expect((await closed.exec(probe, { timeoutSec: 20 })).output).not.toContain('host-secret');
    } finally {
      await open.stop();
      await closed.stop();
      server.close();
    }
  });
});
