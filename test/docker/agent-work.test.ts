/**
 * Taking an agent's work out of its container (src/trials/agent-work.ts), on the real engine:
 * the agent's container is halted before its folder is read (a background writer the agent left
 * stops writing), and the copy is bounded by the disk limit (sparse files count at their full
 * size: 100 GiB of them are refused at the first header past the cap, in seconds, none of their
 * bytes written into the fresh container).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, pipeline, Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { DockerContainerEnvironment } from '../../src/environments/docker/container.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import {
  CopyTimeoutError,
  type Environment,
  EnvironmentCopyError,
} from '../../src/environments/environment.ts';
import { DEFAULT_RETRY, shouldRetry } from '../../src/jobs/job-files.ts';
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

/** Whether `path` exists in `env`'s container (a new exec: `haltOnExit` leaves the container running). */
async function exists(env: Environment, path: string): Promise<boolean> {
  return (await env.exec(`test -e ${path}`, { user: 'root' })).exitCode === 0;
}

/**
 * A writer left in a session of its own: as soon as the command's shell (`$$`) is gone it runs
 * `act` (in the shell's folder).
 */
const lateWriter = (act: string) =>
  `setsid nohup sh -c 'while kill -0 "$1" 2>/dev/null; do sleep 0.01; done; ${act}' late "$$" >/dev/null 2>&1 </dev/null &`;

describe.skipIf(skipDocker)('ExecOptions.haltOnExit (real engine)', () => {
  it('stops what the command left running as it ends, before exec returns (root: all but pid 1); without it the writer writes', async () => {
    const env = await start();
    // Without haltOnExit the writer acts once the shell is gone (this is what the option stops).
    const control = await env.exec(lateWriter('git apply --help >/dev/null 2>&1; echo late > control.txt'));
    expect(control.exitCode, control.output).toBe(0);
    let wrote = false;
    for (let i = 0; i < 100 && !wrote; i++) wrote = await exists(env, '/testbed/control.txt');
    expect(wrote).toBe(true);
    // With it: the same writer (a program started, then the write) never writes.
    const begun = performance.now();
    const run = await env.exec(
      `${lateWriter('git apply --help >/dev/null 2>&1; echo late > late.txt')}\nexit 3`,
      { haltOnExit: true },
    );
    const seconds = (performance.now() - begun) / 1000;
    expect(run.exitCode).toBe(3);
    await sleep(1000);
    expect(await exists(env, '/testbed/late.txt')).toBe(false);
    // Its processes are stopped, not gone: pid 1 (the keep-alive loop) is not, and the engine's
    // pause and copy work after.
    const states = await env.exec(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
      'for s in /proc/[0-9]*/stat; do read -r l < $s; echo "${l%% (*} ${l##*) }" | cut -d" " -f1,2; done',
      { user: 'root' },
    );
    expect(states.output).toMatch(/^1 [SR]$/m);
    expect(states.output).toMatch(/ T$/m);
    await env.halt();
    const file = join(tempDir('berth-halt-on-exit-'), 'calc.py');
    await env.download('/testbed/calc.py', file);
    expect(readFileSync(file, 'utf8')).toContain('def add');
    console.log(
      `haltOnExit: exec returned in ${seconds.toFixed(2)} s; states: ${states.output.trim().replace(/\n/g, ', ')}`,
    );
  });

  it('stops a writer that forks all the time, and one of the same user only (a non-root user cannot stop root processes)', async () => {
    const env = await start();
    // A root process (not the agent's) keeps a clock in /tmp; the agent runs as nobody.
    await env.exec(
      `setsid nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/root-clock; sleep 0.05; done' >/dev/null 2>&1 </dev/null &`,
      { user: 'root' },
    );
    const run = await env.exec(
      [
        // Forks without end (each child forks again and exits), and a late writer.
        `setsid nohup sh -c 'while :; do (:) & wait; done' >/dev/null 2>&1 </dev/null &`,
        `setsid nohup sh -c 'while :; do sh -c "(:) &"; done' >/dev/null 2>&1 </dev/null &`,
        lateWriter('echo late > /tmp/late.txt'),
        'sleep 0.3',
      ].join('\n'),
      { haltOnExit: true, user: 'nobody' },
    );
    expect(run.exitCode, run.output).toBe(0);
    const running = await env.exec(
      `for s in /proc/[0-9]*/stat; do read -r l < $s; st=\${l##*) }; u=$(stat -c %U \${s%/stat}); echo "$u \${st%% *}"; done | sort | uniq -c`,
      { user: 'root' },
    );
    // No process of nobody runs; root's clock does.
    expect(running.output).not.toMatch(/nobody [RSD]/);
    expect(running.output).toMatch(/nobody T/);
    const before = (await env.exec('cat /tmp/root-clock', { user: 'root' })).output;
    await sleep(500);
    expect((await env.exec('cat /tmp/root-clock', { user: 'root' })).output).not.toBe(before);
    expect(await exists(env, '/tmp/late.txt')).toBe(false);
    console.log(`haltOnExit as nobody: ${running.output.trim().replace(/\s+/g, ' ')}`);
  });

  it('at a timeout, the kill stops what the command left running too', async () => {
    const env = await start();
    const run = await env.exec(`${lateWriter('echo late > late.txt')}\nsleep 60`, {
      haltOnExit: true,
      timeoutSec: 2,
    });
    expect(run.timedOut).toBe(true);
    await sleep(1000);
    expect(await exists(env, '/testbed/late.txt')).toBe(false);
  });
});

describe.skipIf(skipDocker)('copies into and out of a container are bounded in time (real engine)', () => {
  it('a copy out that cannot end (sparse files of 800 GiB) fails with CopyTimeoutError at its bound', async () => {
    const env = await start();
    // As root and without the file size limit: 100 sparse files of 8 GiB (no disk used).
    await env.quiet('mkdir -p /big && cd /big && for i in $(seq 1 100); do truncate -s 8G f$i; done');
    const begun = performance.now();
    const stream = await env.archive('/big', { timeoutSec: 3 });
    let bytes = 0;
    const error = await new Promise<unknown>((resolve) => {
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      stream.once('error', resolve);
      stream.once('end', () => resolve(undefined));
    });
    const seconds = (performance.now() - begun) / 1000;
    expect(error).toBeInstanceOf(CopyTimeoutError);
    expect(seconds).toBeLessThan(15);
    console.log(`archive: ${bytes} bytes, CopyTimeoutError after ${seconds.toFixed(1)} s`);
  });

  it('a copy in whose stream stalls fails with CopyTimeoutError at its bound', async () => {
    const env = await start();
    // A tar header of a 1 MiB file, then nothing: the engine waits for the rest.
    const stalled = new PassThrough();
    const header = Buffer.alloc(512);
    header.write('stalled.bin', 0);
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write('00004000000\0', 124);
    header.write('00000000000\0', 136);
    header.write('        ', 148);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    stalled.write(header);
    stalled.write(Buffer.alloc(4096));
    const begun = performance.now();
    await expect(env.extractArchive('/tmp', stalled, { timeoutSec: 3 })).rejects.toBeInstanceOf(
      CopyTimeoutError,
    );
    const seconds = (performance.now() - begun) / 1000;
    expect(seconds).toBeLessThan(15);
    expect(stalled.destroyed).toBe(true);
    console.log(`extractArchive: CopyTimeoutError after ${seconds.toFixed(1)} s`);
  });

  it('a log file the engine cannot finish sending (1 TiB sparse stdout.txt) ends the download at its bound', async () => {
    const env = await start();
    await env.quiet('mkdir -p /logs/agent/command && truncate -s 1T /logs/agent/command/stdout.txt');
    const begun = performance.now();
    const report = await env.download(
      '/logs/agent/command/stdout.txt',
      join(tempDir('berth-copy-bound-'), 'stdout.txt'),
      {
        timeoutSec: 3,
        maxBytes: MiB,
      },
    );
    const seconds = (performance.now() - begun) / 1000;
    expect(report.timedOut).toBe(true);
    expect(seconds).toBeLessThan(15);
    console.log(`download: timed out after ${seconds.toFixed(1)} s, ${report.bytes} bytes kept`);
  });

  it("an engine failure while the agent's work is carried is berth's (EnvironmentCopyError, retried), not the agent's", async () => {
    const [agent, fresh] = await Promise.all([start(), start()]);
    const base = await baseOf(fresh);
    expect((await agent.exec('echo fix >> calc.py')).exitCode).toBe(0);
    // The fresh container goes away under the copy (the engine answers 404).
    const gone: Environment = Object.create(fresh, {
      extractArchive: {
        value: async (path: string, stream: NodeJS.ReadableStream) => {
          await fresh.stop();
          return fresh.extractArchive(path, stream as never);
        },
      },
    });
    const error = await takeAgentWork(agent, gone, base).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EnvironmentCopyError);
    expect(error).not.toBeInstanceOf(AgentWorkError);
    expect(shouldRetry({ ...DEFAULT_RETRY, max_retries: 3 }, (error as Error).name)).toBe(true);
    console.log(`engine failure: ${(error as Error).name}: ${(error as Error).message}`);
  });
});
