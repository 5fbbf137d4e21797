/**
 * CI's durations reporter (test/helpers/durations-reporter.ts) counts a file's hooks: a file whose
 * work runs in `beforeAll`, as the tamper corpus's does, must not be recorded as its tests' few
 * milliseconds (it was, from vitest's JSON results, and so ran last in CI).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it('records a file whose work is in beforeAll at its whole time, and a quick file at its own', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'berth-durations-'));
  dirs.push(dir);
  await writeFile(
    join(dir, 'slow-hook.test.ts'),
    "import { beforeAll, it } from 'vitest';\n" +
      'beforeAll(async () => { await new Promise((r) => setTimeout(r, 1500)); });\n' +
      "it('a', () => {});\nit('b', () => {});\n",
  );
  await writeFile(join(dir, 'quick.test.ts'), "import { it } from 'vitest';\nit('c', () => {});\n");
  await writeFile(join(dir, 'vitest.config.ts'), 'export default { test: { include: ["*.test.ts"] } };\n');
  const out = join(dir, 'durations.json');
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const reporter = join(root, 'test', 'helpers', 'durations-reporter.ts');
  await run(process.execPath, [vitest, 'run', '--root', dir, `--reporter=${reporter}`], {
    cwd: dir,
    env: { ...process.env, BERTH_DURATIONS_OUT: out },
  });
  const table = JSON.parse(await readFile(out, 'utf8')) as Record<string, number>;
  expect(Object.keys(table)).toEqual(['slow-hook.test.ts', 'quick.test.ts']);
  expect(table['slow-hook.test.ts']).toBeGreaterThanOrEqual(1.5);
  expect(table['quick.test.ts']).toBeLessThan(1.5);
});
