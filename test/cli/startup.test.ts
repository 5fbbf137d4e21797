/**
 * `berth` in a checkout runs its sources compiled once into a cache (bin/compile.js): the
 * first start builds, later starts reuse the build, an edit makes a new one, concurrent first
 * starts build once, and where nothing can be built berth still runs (through tsx).
 * The speed itself is measured by bench/startup.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { appendFile, cp, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const version = (JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { version: string })
  .version;

/** A copy of the checkout's sources and entry point, with the real node_modules linked in. */
async function checkout(): Promise<{ dir: string; cache: string }> {
  const dir = await temp.make('berth-startup-');
  for (const name of ['bin', 'src', 'examples', 'package.json'])
    await cp(join(repo, name), join(dir, name), { recursive: true });
  await symlink(join(repo, 'node_modules'), join(dir, 'node_modules'));
  return { dir, cache: join(dir, 'build-cache') };
}

function berth(dir: string, cache: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync('node', [join(dir, 'bin', 'berth.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, BERTH_BUILD_DIR: cache, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const builds = (cache: string) => (existsSync(cache) ? readdirSync(cache).sort() : []);

describe('start-up: the sources compiled once into a cache', () => {
  it('builds on the first start, reuses the build, and builds again after an edit', async () => {
    const { dir, cache } = await checkout();
    const first = berth(dir, cache, ['--version']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe(version);
    const [build, ...more] = builds(cache);
    expect(more).toEqual([]);
    const entry = join(cache, build as string, 'cli', 'main.js');
    expect(existsSync(entry)).toBe(true);
    // Copied beside the compiled modules: the report's assets.
    expect(existsSync(join(cache, build as string, 'reporters', 'html', 'assets', 'app.js'))).toBe(true);
    const built = statSync(entry).mtimeMs;

    const again = berth(dir, cache, ['--version']);
    expect(again.stdout.trim()).toBe(version);
    expect(builds(cache)).toEqual([build]);
    expect(statSync(entry).mtimeMs).toBe(built);

    // A command that reads package files (the bundled sample) from the compiled build.
    const parse = berth(dir, cache, [
      'dataset',
      'controls',
      join(dir, 'examples', 'swe-dockerless.jsonl'),
      '-o',
      join(dir, 'controls'),
    ]);
    expect(parse.code, parse.stderr).toBe(0);
    expect(existsSync(join(dir, 'controls', 'empty.jsonl'))).toBe(true);

    // An edit: the next start compiles the new sources and runs them.
    await appendFile(
      join(dir, 'src', 'version.ts'),
      "\nif (process.env.BERTH_STARTUP_TEST) process.stdout.write('edited\\n');\n",
    );
    const edited = berth(dir, cache, ['--version'], { BERTH_STARTUP_TEST: '1' });
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stdout).toBe(`edited\n${version}\n`);
    expect(builds(cache)).toHaveLength(2);
  });

  it('concurrent first starts build once', async () => {
    const { dir, cache } = await checkout();
    const runs = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<{ code: number | null; out: string }>((resolve) => {
            const child = spawn('node', [join(dir, 'bin', 'berth.js'), '--version'], {
              env: { ...process.env, BERTH_BUILD_DIR: cache },
            });
            let out = '';
            child.stdout.on('data', (chunk) => {
              out += chunk;
            });
            child.on('close', (code) => resolve({ code, out }));
          }),
      ),
    );
    for (const run of runs) expect(run).toEqual({ code: 0, out: `${version}\n` });
    // One build, no temporary folder or lock left.
    expect(builds(cache)).toHaveLength(1);
  });

  it('runs through tsx where nothing can be built', async () => {
    const { dir } = await checkout();
    const notAFolder = join(dir, 'not-a-folder');
    await writeFile(notAFolder, '');
    const run = berth(dir, join(notAFolder, 'cache'), ['--version']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(version);
    expect(run.stderr).toBe('');
  });
});
