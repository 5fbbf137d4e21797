/** `berth clean` keeps berth's caches (installed agents, model responses); `berth clean --cache` removes them. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dockerAvailable } from '../../src/environments/docker/client.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

function berth(args: string[], env: Record<string, string>) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1', ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('berth clean and the caches', () => {
  it('clean keeps the agent and model caches; clean --cache removes them and nothing else', async (ctx) => {
    const cache = await temp.make('berth-clean-cache-');
    const agent = join(cache, 'agents', 'codex-0.171.0-linux-x64-glibc');
    await mkdir(agent, { recursive: true });
    await writeFile(join(agent, 'berth-agent.json'), '{}');
    await mkdir(join(cache, 'models', 'ab'), { recursive: true });
    await writeFile(join(cache, 'models', 'ab', 'x.json'), '{}');
    await mkdir(join(cache, 'installs', 'abc', 'repo', 'node_modules'), { recursive: true });
    await writeFile(join(cache, 'installs', 'abc', 'repo', 'node_modules', 'big'), Buffer.alloc(3 << 20));
    // A copy of the start-up build, so that removing it does not touch the one the suite runs.
    const build = join(cache, 'berth-build');
    await mkdir(join(build, 'k'), { recursive: true });
    await writeFile(join(build, 'k', 'x.js'), '');
    await mkdir(join(cache, 'other'));
    await writeFile(join(cache, 'other', 'keep.txt'), 'not berth-made');
    if (await dockerAvailable()) {
      // A job of its own (an empty job folder) so that no other test's containers are touched.
      await mkdir(join(cache, 'jobs', 'berth-clean-cache-test-job'), { recursive: true });
      const plain = berth(
        ['clean', '--job', 'berth-clean-cache-test-job', '--jobs-dir', join(cache, 'jobs')],
        {
          BERTH_CACHE_DIR: cache,
          BERTH_BUILD_DIR: build,
          BERTH_NO_BUILD: '1',
        },
      );
      expect(plain.code).toBe(0);
      expect(plain.stdout).toMatch(
        /berth's caches: [\d.]+ MiB \(agents [\d.]+ MiB, models [\d.]+ MiB, .*installs 3\.0 MiB/,
      );
      expect(existsSync(join(agent, 'berth-agent.json'))).toBe(true);
      expect(existsSync(join(cache, 'models', 'ab', 'x.json'))).toBe(true);
    } else ctx.annotate('no Docker engine: plain `berth clean` not run');
    // Without an engine (so the machine's agent layers stay for the other tests), --cache still clears the host.
    const cleared = berth(['clean', '--cache'], {
      BERTH_CACHE_DIR: cache,
      BERTH_BUILD_DIR: build,
      BERTH_NO_BUILD: '1',
      DOCKER_HOST: `unix://${join(cache, 'no-engine.sock')}`,
    });
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toContain(`removed berth's caches under ${cache}`);
    expect(existsSync(join(cache, 'agents'))).toBe(false);
    expect(existsSync(join(cache, 'models'))).toBe(false);
    expect(existsSync(join(cache, 'installs'))).toBe(false);
    expect(existsSync(build)).toBe(false);
    expect(existsSync(join(cache, 'other', 'keep.txt'))).toBe(true);
  });

  it('clean --job of a job berth does not know: "no such job", exit 2, nothing removed', async () => {
    const cache = await temp.make('berth-clean-nojob-');
    await mkdir(join(cache, 'models', 'ab'), { recursive: true });
    const env = { BERTH_CACHE_DIR: cache, BERTH_NO_BUILD: '1' };
    const run = berth(['clean', '--job', 'does-not-exist', '--cache'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no such job: "does-not-exist"');
    expect(run.stderr).toContain("--job takes the job's name");
    expect(run.stdout).toBe('');
    expect(existsSync(join(cache, 'models', 'ab'))).toBe(true);
    expect(berth(['clean', '--job', 'a/b'], env).code).toBe(2);
    const help = berth(['clean', '--help'], env);
    expect(help.stdout).toMatch(
      /--job <name>\s+only what this job left; the job's name \(berth run's\s+--job-name/,
    );
  });
});
