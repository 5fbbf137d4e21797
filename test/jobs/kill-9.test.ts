/**
 * Issue 10 §4: after `kill -9` of berth mid-job, the next `berth run` of that job removes what
 * the dead process left (local: the environment's temp folder and its tmpfs mount; Docker: the
 * trial's container and networks), and `berth clean` never touches what a live berth process
 * owns. Everything is found by its owner (src/util/owner.ts): containers and networks by the
 * label `dev.berth.owner`, temp folders by the record under /tmp/berth-owners.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { LABELS } from '../../src/environments/docker/labels.ts';
import { ownersDir } from '../../src/util/leftovers.ts';
import { BASE_IMAGE, skipDocker } from '../docker/helpers.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const calcDir = fileURLToPath(new URL('../fixtures/harbor/tasks/calc', import.meta.url));
const temp = tempDirs();
const started: ChildProcess[] = [];
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  await temp.cleanup();
});

const berth = (...args: string[]) =>
  spawnSync('node', [bin, ...args], { encoding: 'utf8', timeout: 300_000 });

/** The temp folders recorded for `job` by the berth process `pid` (src/util/leftovers.ts). */
function recordedFolders(pid: number, job: string): string[] {
  const out: string[] = [];
  let files: string[] = [];
  try {
    files = readdirSync(ownersDir());
  } catch {
    return out;
  }
  for (const f of files) {
    if (!f.includes(`berth-${pid}-`)) continue;
    for (const line of readFileSync(join(ownersDir(), f), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as { path: string; job?: string };
      if (e.job === job) out.push(e.path);
    }
  }
  return out;
}

const mounted = (path: string) => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${path} `);

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  sec = 120,
): Promise<T> {
  const deadline = Date.now() + sec * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Starts `berth run ARGS` in the background (a process the test kills with SIGKILL). */
function startRun(args: string[]): ChildProcess {
  const child = spawn('node', [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  (child as ChildProcess & { stderrText: () => string }).stderrText = () => stderr;
  started.push(child);
  return child;
}

describe('kill -9 of berth mid-job, then resume', () => {
  it('local: the dead run’s environment folder (and tmpfs) is removed by the next run of the job; clean spares a live run', async () => {
    const jobsDir = await temp.make('berth-trust-fs-kill-');
    const job = `kill9-local-${process.pid}`;
    const args = [
      'run',
      '-p',
      sample,
      '-i',
      'berth__csvline-1',
      '-a',
      'command',
      '--agent-command',
      'sleep 15',
    ];
    const child = startRun([...args, '--job-name', job, '--jobs-dir', jobsDir]);
    const pid = child.pid as number;
    // The agent is running: its environment folder is recorded under the live owner.
    const [root] = await until('the environment folder', () => {
      const found = recordedFolders(pid, job).filter((p) => existsSync(join(p, 'repo')));
      return found.length > 0 ? found : undefined;
    });
    if (!root) throw new Error('no folder');
    // A live owner's folder is spared by `berth clean`.
    const clean = berth('clean', '--job', job);
    expect(clean.status, clean.stderr).toBe(0);
    expect(existsSync(root)).toBe(true);

    child.kill('SIGKILL');
    await until('the run to die', () =>
      child.exitCode !== null || child.signalCode !== null ? true : undefined,
    );
    const wasMounted = mounted(root);
    expect(existsSync(root), 'the killed run left its folder').toBe(true);

    const resumed = berth(...args, '--job-name', job, '--jobs-dir', jobsDir);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(existsSync(root), `the dead run's folder ${root} was removed`).toBe(false);
    if (wasMounted) expect(mounted(root)).toBe(false);
    expect(recordedFolders(pid, job)).toEqual([]);
    // Nothing of the job is left in the temp folder (the resumed run removed its own).
    const safeJob = job.replace(/[^A-Za-z0-9._-]/g, '_');
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith(`berth-${safeJob}-`))).toEqual([]);
    expect(existsSync(join(jobsDir, job, 'berth__csvline-1__1', 'result.json'))).toBe(true);
  }, 300_000);

  it.skipIf(skipDocker)(
    'Docker: the dead run’s container and networks are removed by the next run of the job; clean spares a live run',
    async () => {
      const { docker } = await connectDocker();
      const jobsDir = await temp.make('berth-trust-fs-kill-');
      const job = `kill9-docker-${process.pid}`;
      const filters = { label: [`${LABELS.job}=${job}`] };
      const args = [
        'run',
        '-p',
        calcDir,
        '-a',
        'command',
        '--agent-command',
        'sleep 15',
        '--image-map',
        `debian:bookworm-slim=${BASE_IMAGE}`,
      ];
      const child = startRun([...args, '--job-name', job, '--jobs-dir', jobsDir]);
      const pid = child.pid as number;
      const [container] = await until('the trial container', async () => {
        const list = await docker.listContainers({ filters });
        return list.length > 0 ? list : undefined;
      });
      expect(container?.Labels[LABELS.owner]).toMatch(new RegExp(`/berth-${pid}-\\d+$`));
      // A live owner's container is spared by `berth clean` (with or without --job).
      for (const clean of [berth('clean'), berth('clean', '--job', job)])
        expect(clean.status, clean.stderr).toBe(0);
      expect((await docker.listContainers({ filters })).length).toBe(1);

      child.kill('SIGKILL');
      await until('the run to die', () =>
        child.exitCode !== null || child.signalCode !== null ? true : undefined,
      );
      expect(
        (await docker.listContainers({ all: true, filters })).length,
        'the killed run left its container',
      ).toBe(1);

      const resumed = berth(...args, '--job-name', job, '--jobs-dir', jobsDir);
      expect(resumed.status, resumed.stderr).toBe(0);
      expect(await docker.listContainers({ all: true, filters })).toEqual([]);
      expect(await docker.listNetworks({ filters })).toEqual([]);
      expect(existsSync(join(jobsDir, job))).toBe(true);
    },
    300_000,
  );
});
