/**
 * Taking an agent's work out of its container (src/trials/agent-work.ts), on the real engine:
 * the agent's container is halted before its folder is read (a background writer the agent left
 * stops writing), and the copy is bounded by the disk limit (sparse files count at their full
 * size: 100 GiB of them are refused at the first header past the cap, in seconds, none of their
 * bytes written into the fresh container).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { DockerContainerEnvironment } from '../../src/environments/docker/container.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import type { Environment } from '../../src/environments/environment.ts';
import { MiB } from '../../src/sandbox/limits.ts';
import type { Task } from '../../src/tasks/task.ts';
import { takeAgentWork } from '../../src/trials/agent-work.ts';
import { AgentWorkError } from '../../src/trials/errors.ts';
import { CALC_DOCKERFILE, JOB_ID, skipDocker, tempDir } from './helpers.ts';

const CAP = 64 * MiB;

const task: Task = {
  name: 'agent-work-docker',
  format: 'swebench',
  origin: { file: 'inline' },
  instruction: '',
  environment: {
    kind: 'docker',
    dockerfile: CALC_DOCKERFILE,
    workdir: '/testbed',
    network: { mode: 'no-network' },
  },
  solution: { kind: 'none' },
  verifier: {
    kind: 'swebench',
    testPatch: '',
    testCommand: 'true',
    testFiles: [],
    failToPass: [],
    passToPass: [],
    timeoutSec: 60,
  },
  metadata: {},
};

const started: Environment[] = [];
afterAll(async () => {
  for (const env of started) await env.stop();
});

async function start(): Promise<DockerContainerEnvironment> {
  const provider = new DockerEnvironmentProvider({ limits: { writableBytes: CAP } });
  const env = await provider.start({ task, jobId: JOB_ID, trialDir: tempDir('berth-agent-work-') });
  started.push(env);
  return env;
}

async function baseOf(env: Environment): Promise<string> {
  const head = await env.exec('git rev-parse HEAD');
  expect(head.exitCode, head.output).toBe(0);
  return head.output.trim();
}

/** `clock.txt` of the (halted) container, read by the engine. */
async function clockOf(env: Environment): Promise<string> {
  const file = join(tempDir('berth-agent-work-clock-'), 'clock.txt');
  await env.download('/testbed/clock.txt', file);
  return readFileSync(file, 'utf8');
}

describe.skipIf(skipDocker)('takeAgentWork (real engine)', () => {
  it("halts the agent's container first: a writer the agent left running stops before the copy", async () => {
    const [agent, fresh] = await Promise.all([start(), start()]);
    const base = await baseOf(fresh);
    // The agent's command returns; the writer it started in a session of its own keeps going.
    const acted = await agent.exec(
      [
        `setsid nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > .tick && mv -f .tick clock.txt; done' >/dev/null 2>&1 </dev/null &`,
        'while [ ! -s clock.txt ]; do sleep 0.05; done',
        'echo early > early.txt',
      ].join('\n'),
    );
    expect(acted.exitCode, acted.output).toBe(0);
    const diff = await takeAgentWork(agent, fresh, base);
    expect(diff).toContain('+++ b/early.txt');
    // Nothing runs in the agent's container any more: the file holds still, and the copy is it.
    const last = await clockOf(agent);
    await sleep(1000);
    expect(await clockOf(agent)).toBe(last);
    expect(diff).toContain(`+++ b/clock.txt\n@@ -0,0 +1 @@\n+${last}`);
    await expect(agent.exec('true')).rejects.toThrow();
  });

  it('refuses 100 GiB of sparse files at the first header past the disk limit, nothing of them written', async () => {
    const [agent, fresh] = await Promise.all([start(), start()]);
    const base = await baseOf(fresh);
    // One 100 GiB file is past the file size limit (ulimit -f: 64 MiB here); 1600 of 64 MiB are not.
    const acted = await agent.exec(
      [
        'truncate -s 100G big.bin 2>/dev/null',
        'echo fix >> calc.py',
        `python3 -c 'for i in range(1, 1601): open(f"s{i}.bin", "wb").truncate(64 << 20)'`,
        'du -sk . | cut -f1',
      ].join('\n'),
    );
    expect(acted.exitCode, acted.output).toBe(0);
    // The copy's bytes as the fresh container receives them.
    let received = 0;
    const counted: Environment = Object.create(fresh, {
      extractArchive: {
        value: (path: string, stream: NodeJS.ReadableStream) => {
          const meter = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              received += chunk.length;
              done(null, chunk);
            },
          });
          pipeline(stream, meter, () => undefined);
          return fresh.extractArchive(path, meter);
        },
      },
    });
    const begun = performance.now();
    const taken = takeAgentWork(agent, counted, base);
    await expect(taken).rejects.toBeInstanceOf(AgentWorkError);
    await expect(taken).rejects.toThrow(
      /"testbed\/s\d+\.bin" \(67108864 bytes\) takes the copy past its cap of 67108864 bytes/,
    );
    const seconds = (performance.now() - begun) / 1000;
    expect(seconds).toBeLessThan(60);
    expect(received).toBeLessThan(CAP);
    console.log(
      `sparse: refused in ${seconds.toFixed(1)} s after ${received} bytes (agent's folder on disk: ${acted.output.trim()} KiB)`,
    );
  });
});
