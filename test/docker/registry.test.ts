/**
 * Harbor's registries, offline (issue 19): `berth run -d NAME@VERSION --registry-path FILE
 * --repos DIR` with a registry file and a git mirror made here; what needs the network is
 * refused with the reason (exit 2).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE, FIXTURES, skipDocker, tempDir } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CALC = join(FIXTURES, 'tasks', 'calc');

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd });
  return r.stdout.trim();
}

describe.skipIf(skipDocker)('registries (-d, offline)', () => {
  let dir: string;
  let pinned: string;
  const berth = (...args: string[]) =>
    execa('node', [join(ROOT, 'bin', 'berth.js'), ...args], {
      cwd: dir,
      reject: false,
      env: { BERTH_CACHE_DIR: join(dir, 'cache') },
    });

  beforeAll(async () => {
    dir = tempDir('berth-harbor2-registry-');
    // A repository of tasks, published as github.com/acme/tasks; its mirror under repos/.
    const work = join(dir, 'work');
    mkdirSync(join(work, 'tasks'), { recursive: true });
    cpSync(CALC, join(work, 'tasks', 'calc'), { recursive: true });
    await git(work, 'init', '-q');
    await git(work, 'add', '-A');
    await git(work, 'commit', '-qm', 'calc');
    pinned = await git(work, 'rev-parse', 'HEAD');
    // A later commit breaks the task's solution: the registry's pinned commit must be the one run.
    writeFileSync(join(work, 'tasks', 'calc', 'solution', 'solve.sh'), '#!/bin/bash\nexit 0\n');
    await git(work, 'commit', '-qam', 'later');
    await execa('git', ['clone', '-q', '--mirror', work, join(dir, 'repos', 'acme__tasks.git')]);
    // A local task beside the registry file (no git_url).
    cpSync(CALC, join(dir, 'local', 'calc-here'), { recursive: true });
    const registry = [
      {
        name: 'demo',
        version: '1.0',
        description: 'two tasks',
        tasks: [
          {
            name: 'calc',
            git_url: 'https://github.com/acme/tasks.git',
            git_commit_id: pinned,
            path: 'tasks/calc',
          },
          { name: 'calc-here', path: 'local/calc-here' },
        ],
        metrics: [{ type: 'mean' }],
      },
      {
        name: 'demo',
        version: '2.0',
        tasks: [{ name: 'calc', git_url: 'https://github.com/acme/other.git', path: 'tasks/calc' }],
      },
    ];
    writeFileSync(join(dir, 'registry.json'), JSON.stringify(registry, null, 2));
  }, 120_000);

  it('-d NAME@VERSION runs the dataset from the registry file, the git task at its pinned commit from the mirror', async () => {
    const run = await berth(
      'run',
      '-d',
      'demo@1.0',
      '--registry-path',
      'registry.json',
      '--repos',
      'repos',
      '-a',
      'oracle',
      '--image-map',
      `debian:bookworm-slim=${BASE_IMAGE}`,
      '--jobs-dir',
      'jobs',
      '--job-name',
      'j',
    );
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, 'jobs', 'j', 'result.json'), 'utf8')) as {
      stats: { evals: Record<string, { n_trials: number; metrics: Array<{ mean: number }> }> };
    };
    // Two trials with rewards, mean reward 1.
    expect(Object.values(result.stats.evals).map((e) => [e.n_trials, e.metrics[0]?.mean])).toEqual([[2, 1]]);
    expect(run.stderr).toContain(`fetching calc (tasks/calc at ${pinned.slice(0, 12)})`);
    // berth clean --cache removes the fetched tasks.
    expect(existsSync(join(dir, 'cache', 'registry'))).toBe(true);
    // Its own start-up build folder: --cache also removes that one, which other tests' berth uses.
    // --job of an empty job folder of its own: no other test's containers are touched.
    mkdirSync(join(dir, 'jobs', 'none-of-mine'), { recursive: true });
    const clean = await execa(
      'node',
      [join(ROOT, 'bin', 'berth.js'), 'clean', '--cache', '--job', 'none-of-mine'],
      {
        cwd: dir,
        reject: false,
        env: { BERTH_CACHE_DIR: join(dir, 'cache'), BERTH_BUILD_DIR: join(dir, 'build') },
      },
    );
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(existsSync(join(dir, 'cache', 'registry'))).toBe(false);
  });

  it('what needs the network is refused with the reason and the offline way (exit 2)', async () => {
    const cases: Array<[string[], string]> = [
      [['-d', 'demo@1.0'], 'download it and pass --registry-path FILE'],
      [['-d', 'terminal-bench/terminal-bench-2'], 'Harbor Hub'],
      [['-t', 'acme/calc@v1'], "-t acme/calc@v1: Harbor's package registry (Harbor Hub) is on the network"],
      [
        ['-d', 'demo@1.0', '--registry-url', 'https://example.invalid/registry.json'],
        'berth does not download registries (offline)',
      ],
      [
        ['-d', 'demo@1.0', '--registry-path', 'registry.json'],
        'https://github.com/acme/tasks.git is on the network and berth fetches offline: pass --repos DIR',
      ],
      [
        ['-d', 'demo@2.0', '--registry-path', 'registry.json', '--repos', 'repos'],
        'no mirror of acme/other under',
      ],
      [['-d', 'demo', '--registry-path', 'registry.json'], 'demo has versions 1.0, 2.0; say which'],
      [['-d', 'nope@1', '--registry-path', 'registry.json'], 'has no dataset nope (it has demo)'],
      [['-p', '.', '-d', 'demo@1.0', '--registry-path', 'registry.json'], '-p and -d/-t are alternatives'],
      [[], 'berth run needs a dataset'],
    ];
    for (const [args, message] of cases) {
      const run = await berth('run', ...args, '--jobs-dir', 'jobs-refused');
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(message);
    }
    expect(existsSync(join(dir, 'jobs-refused'))).toBe(false);
  });
});
