import { spawnSync } from 'node:child_process';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDir, fixturesDir, hasData } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

function berth(...args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('berth check goes on past a task that does not load', () => {
  it('reports the bad task as "cannot run here" with the reason, checks the others, exits 2 at the end', async () => {
    const dir = await temp.make('berth-robust-');
    // Sorted first, so a check that stops at the first bad task never reaches calc.
    await mkdir(join(dir, 'aaa-bad'));
    await writeFile(join(dir, 'aaa-bad', 'task.toml'), 'version = "1.0"\n');
    await writeFile(join(dir, 'aaa-bad', 'instruction.md'), 'do it\n');
    await cp(join(fixturesDir, 'harbor', 'tasks', 'calc'), join(dir, 'calc'), { recursive: true });
    const json = berth('check', '-p', dir, '--json');
    expect(json.code).toBe(2);
    const report = JSON.parse(json.stdout) as {
      summary: { total: number };
      tasks: Array<{ task: string; canRun: string; reasons: string[] }>;
    };
    expect(report.summary.total).toBe(2);
    expect(report.tasks.map((t) => t.task)).toEqual(['aaa-bad', 'calc']);
    expect(report.tasks[0]?.canRun).toBe('no');
    expect(report.tasks[0]?.reasons.join()).toContain('the task does not load:');
    expect(report.tasks[0]?.reasons.join()).toContain('aaa-bad');
    // calc was checked for real (its image may be missing here, but it loaded).
    expect(report.tasks[1]?.reasons.join()).not.toContain('does not load');
    expect((report.tasks[1] as { image?: string }).image).not.toBe('-');
    const text = berth('check', '-p', dir);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('aaa-bad: cannot run here');
    expect(text.stdout).toContain('2 task(s):');
    expect(text.stdout).toContain('(1 do not load)');
  });

  it('a task.toml with several problems: each on its own line under the reason', async () => {
    const dir = await temp.make('berth-robust-');
    await mkdir(join(dir, 'bad'));
    await writeFile(
      join(dir, 'bad', 'task.toml'),
      '[agent]\ntimeout_sec = "long"\n[environment]\ncpus = "two"\n',
    );
    await writeFile(join(dir, 'bad', 'instruction.md'), 'do it\n');
    const text = berth('check', '-p', dir);
    expect(text.code).toBe(2);
    const file = join(dir, 'bad', 'task.toml');
    expect(text.stdout).toContain(
      `  - the task does not load: ${file}: 2 problems:\n` +
        `      ${file}:2: agent.timeout_sec: expected a number, got "long"\n` +
        `      ${file}:4: environment.cpus: expected a number, got "two"\n`,
    );
  });

  it.skipIf(!hasData)('kotlin-swe-bench (shared data): every task reported, none stops the check', () => {
    const result = berth('check', '-p', join(dataDir, 'kotlin-swe-bench'));
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      '3 task(s): 0 can run here offline, 0 need the network, 3 cannot run here',
    );
    expect(result.stdout).toMatch(/pinterest_ktlint-2029: cannot run here\n[\s\S]*missing test script/);
  });
});

describe('berth check exits non-zero for a task that cannot run here', () => {
  it('an image the machine cannot provide: exit 1, the task file and the reason on stderr', async () => {
    const dir = await temp.make('berth-ux-check-');
    await cp(join(fixturesDir, 'harbor', 'tasks', 'calc'), join(dir, 'calc'), { recursive: true });
    await writeFile(
      join(dir, 'calc', 'environment', 'Dockerfile'),
      'FROM berth-ux-nowhere/none:0\nWORKDIR /app\n',
    );
    const result = berth('check', '-p', join(dir, 'calc'));
    expect(result.stdout).toContain('calc: cannot run here');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^berth: ${join(dir, 'calc', 'task.toml')}: cannot run here: .*(berth-ux-nowhere/none:0|no Docker engine answers)`,
        'm',
      ),
    );
    expect(berth('check', '-p', join(dir, 'calc'), '--json').code).toBe(1);
  });

  it('no Docker engine: exit 1 naming the reason', async () => {
    const dir = await temp.make('berth-ux-check-');
    await cp(join(fixturesDir, 'harbor', 'tasks', 'calc'), join(dir, 'calc'), { recursive: true });
    const result = spawnSync('node', [bin, 'check', '-p', join(dir, 'calc')], {
      encoding: 'utf8',
      env: { ...process.env, CI: '1', DOCKER_HOST: `unix://${join(dir, 'no-docker.sock')}` },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`berth: ${join(dir, 'calc', 'task.toml')}: cannot run here: `);
    expect(result.stderr).toContain('no Docker engine answers');
  });

  it('a task that can run here: exit 0 (Docker with the base image mapped)', async (ctx) => {
    const docker = spawnSync('docker', ['image', 'inspect', 'berth-base:bookworm'], { encoding: 'utf8' });
    if (docker.status !== 0) ctx.skip('no Docker engine with berth-base:bookworm here');
    const result = berth(
      'check',
      '-p',
      join(fixturesDir, 'harbor', 'tasks', 'calc'),
      '--image-map',
      'debian:bookworm-slim=berth-base:bookworm',
    );
    expect(result.stdout).toContain('calc: can run here');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });
});
