import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { ImageService } from '../../src/environments/docker/images.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { loadHarborPath, loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { FIXTURES, fixtureImageMap, JOB_ID, runPhases, skipDocker, tempDir } from './helpers.ts';

const nop: Agent = { info: { name: 'nop', version: 'test' }, run: async () => ({}) };

describe('loading the fixture dataset', () => {
  it('tells a dataset from a task and maps every field', () => {
    const tasks = loadHarborPath(join(FIXTURES, 'tasks'));
    expect(tasks.map((t) => t.name)).toEqual(['calc', 'calc-json']);
    const calc = tasks[0];
    expect(calc?.instruction).toBe(
      '`add(a, b)` in /app/calc.py returns the wrong result. Make it return the sum.\n',
    );
    expect(calc?.environment).toMatchObject({
      kind: 'docker',
      memoryMb: 512,
      cpus: 1,
      network: { mode: 'no-network' },
      buildTimeoutSec: 300,
    });
    expect(calc?.source).toMatchObject({ repository: 'berth/fixtures', license: 'MIT' });
    expect(calc?.agentTimeoutSec).toBe(60);
    expect(calc?.solution.kind).toBe('script');
    expect(loadHarborPath(join(FIXTURES, 'tasks', 'calc-json'))).toHaveLength(1);
    const based = loadHarborTask(join(FIXTURES, 'based', 'tasks', 'tool-1'));
    expect(based.environment).toMatchObject({
      basesDir: join(FIXTURES, 'based', 'bases'),
      network: { mode: 'public' },
    });
    expect(based.source).toMatchObject({
      repository: 'https://example.invalid/berth/tool',
      pr: 'https://example.invalid/berth/tool/pull/1',
      license: 'Apache-2.0',
    });
  });
});

describe.skipIf(skipDocker)('Harbor tasks in Docker (real engine)', () => {
  const [calc, calcJson] = loadHarborPath(join(FIXTURES, 'tasks'));

  it('oracle -> reward 1, nop -> reward 0 with RewardFileNotFoundError', async () => {
    const solved = await runPhases(calc!, new ScriptOracleAgent());
    expect(solved.verdict).toMatchObject({ rewards: { reward: 1 } });
    expect(solved.verdict.exception).toBeUndefined();
    expect(readFileSync(join(solved.trialDir, 'agent', 'oracle.txt'), 'utf8')).toContain('solved');
    expect(readFileSync(join(solved.trialDir, 'verifier', 'test-stdout.txt'), 'utf8')).toContain(
      'test_calc: all passed',
    );
    const unsolved = await runPhases(calc!, nop);
    expect(unsolved.verdict.rewards).toEqual({ reward: 0 });
    expect(unsolved.verdict.exception?.type).toBe('RewardFileNotFoundError');
  });

  it('reads several metrics from reward.json, runs in [environment] workdir', async () => {
    const solved = await runPhases(calcJson!, new ScriptOracleAgent());
    expect(solved.verdict.rewards).toEqual({ reward: 1, tests_passed: 2 });
    const unsolved = await runPhases(calcJson!, nop);
    expect(unsolved.verdict.rewards).toEqual({ reward: 0, tests_passed: 1 });
  });

  it('builds dataset bases on demand in dependency order, tags the compose image, caches by context hash', async () => {
    const { docker } = await connectDocker();
    for (const image of ['based/tool:base', 'based/tool:base-extra', 'based/tool:pr-1']) {
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
    }
    const task = loadHarborTask(join(FIXTURES, 'based', 'tasks', 'tool-1'));
    const provider = new DockerEnvironmentProvider({ imageMap: fixtureImageMap() });
    const log: string[] = [];
    const image = await provider.prepareImage(task, { jobId: JOB_ID, onLog: (l) => log.push(l) });
    const order = log.filter((l) => l.startsWith('built base image'));
    expect(order).toEqual(['built base image based/tool:base', 'built base image based/tool:base-extra']);
    expect(image).toMatch(/^berth-cache\/hb__tool-1:[0-9a-f]{16}$/);
    await docker.getImage('based/tool:pr-1').inspect();
    // Second time: nothing is built.
    const log2: string[] = [];
    const again = await new DockerEnvironmentProvider({ imageMap: fixtureImageMap() }).prepareImage(task, {
      jobId: JOB_ID,
      onLog: (l) => log2.push(l),
    });
    expect(again).toBe(image);
    expect(log2.some((l) => l.startsWith('built'))).toBe(false);
    expect(log2).toContain(`using cached image ${image}`);
    const run = await runPhases(task, new ScriptOracleAgent());
    expect(run.verdict.rewards).toEqual({ reward: 1 });
  });

  it('refuses an image it would have to pull, naming it and the --image-map way out', async () => {
    const { docker } = await connectDocker();
    const images = new ImageService(docker, {});
    await expect(images.provide('no-such-registry.invalid/nothing:1', {})).rejects.toThrow(
      /not available locally.*--image-map no-such-registry.invalid\/nothing:1=/,
    );
  });

  it('a build that fails reports SandboxBuildFailedError with the log; a slow build times out', async () => {
    const { docker } = await connectDocker();
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir('berth-build-test-');
    writeFileSync(join(dir, 'Dockerfile'), 'FROM debian:bookworm-slim\nRUN echo about-to-fail && exit 7\n');
    const images = new ImageService(docker, { imageMap: fixtureImageMap() });
    await expect(images.build({ contextDir: dir, name: 'fails' })).rejects.toMatchObject({
      exceptionType: 'SandboxBuildFailedError',
    });
    writeFileSync(join(dir, 'Dockerfile'), `FROM debian:bookworm-slim\nRUN sleep 20 # ${Date.now()}\n`);
    const started = Date.now();
    await expect(images.build({ contextDir: dir, name: 'slow', timeoutSec: 2 })).rejects.toMatchObject({
      exceptionType: 'EnvironmentStartTimeoutError',
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
