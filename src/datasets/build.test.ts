import { cp, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { commitBase, writeSnapshot } from '../environments/local/materialise.ts';
import { rowToTask } from '../tasks/swebench/load.ts';
import { buildInstance, findSpecs, loadSpec } from './build.ts';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'berth-build-test-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

const committed = (await readFile(join(examples, 'swe-dockerless.jsonl'), 'utf8'))
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, string>);

describe('berth dataset build on the bundled sample', () => {
  it('finds the four instance folders', async () => {
    const specs = await findSpecs([join(examples, 'src')]);
    expect(specs.map((path) => path.split('/').at(-1))).toEqual([
      'csvline',
      'durations',
      'intervals',
      'toposort',
    ]);
  });

  it('derives the committed row of toposort from repo/, fix/ and tests/ by running node:test twice', async () => {
    const spec = await loadSpec(join(examples, 'src', 'toposort'));
    const { row, report } = await buildInstance(spec);
    expect(report.refused).toEqual([]);
    const expected = committed.find((r) => r.instance_id === 'berth__toposort-1') as Record<string, unknown>;
    expect(row).toEqual(expected);
    expect(report.before['a two-node cycle throws CycleError naming the cycle']).toBe('FAILED');
    expect(report.after['a two-node cycle throws CycleError naming the cycle']).toBe('PASSED');
    expect(JSON.parse(row?.FAIL_TO_PASS as string)).toHaveLength(7);
  });

  it('refuses an instance whose gold fixes only part of what the tests check', async () => {
    const dir = join(scratch, 'half-fixed');
    await cp(join(examples, 'src', 'toposort'), dir, { recursive: true });
    // Gold that fixes levels() but not the cycle detection: cycle tests still fail with it.
    const fixed = await readFile(join(dir, 'fix', 'src', 'toposort.js'), 'utf8');
    const base = await readFile(join(dir, 'repo', 'src', 'toposort.js'), 'utf8');
    const start = (text: string) => text.indexOf('/**\n * Groups nodes');
    await writeFile(
      join(dir, 'fix', 'src', 'toposort.js'),
      base.slice(0, start(base)) + fixed.slice(start(fixed)),
    );
    const { row, report } = await buildInstance(await loadSpec(dir));
    expect(row).toBeUndefined();
    expect(report.refused.join('\n')).toMatch(/gold leaves \d+ failing: .*cycle/);
  });

  it('refuses a test patch that touches source files, before running anything', async () => {
    const dir = join(scratch, 'sneaky');
    await cp(join(examples, 'src', 'toposort'), dir, { recursive: true });
    await cp(join(dir, 'fix', 'src'), join(dir, 'tests', 'src'), { recursive: true });
    const { row, report } = await buildInstance(await loadSpec(dir));
    expect(row).toBeUndefined();
    expect(report.refused).toEqual(['test_patch touches files that are not tests: src/toposort.js']);
    expect(report.testSeconds).toBe(0);
  });

  it('refuses a gold patch that fixes nothing (FAIL_TO_PASS empty)', async () => {
    const dir = join(scratch, 'no-op');
    await cp(join(examples, 'src', 'toposort'), dir, { recursive: true });
    await writeFile(
      join(dir, 'fix', 'src', 'index.js'),
      "export { CycleError, levels, toposort } from './toposort.js';\n// no-op\n",
    );
    await rm(join(dir, 'fix', 'src', 'toposort.js'));
    const { report } = await buildInstance(await loadSpec(dir));
    expect(report.refused.join('\n')).toContain('FAIL_TO_PASS is empty');
  });

  it('refuses a row whose test run prints nothing a parser recognises, naming the run (no internal error)', async () => {
    const dir = join(scratch, 'uncollectable');
    await cp(join(examples, 'src', 'toposort'), dir, { recursive: true });
    const spec = JSON.parse(await readFile(join(dir, 'instance.json'), 'utf8')) as Record<string, string>;
    // Tests that cannot even be collected: an import error, no report of any format.
    spec.test_cmd = 'echo "ImportError: cannot import name levels" >&2; exit 4 # {tests}';
    await writeFile(join(dir, 'instance.json'), JSON.stringify(spec));
    const { row, report } = await buildInstance(await loadSpec(dir));
    expect(row).toBeUndefined();
    expect(report.refused).toHaveLength(1);
    expect(report.refused[0]).toMatch(
      /^the test run with the test patch alone \(exit 4\): no test-report parser recognises this log .*ImportError: cannot import name levels/s,
    );
  });

  it('keeps symlinks, binary files and executable bits of the snapshot, and the row runs', async () => {
    const dir = join(scratch, 'links');
    await cp(join(examples, 'src', 'toposort'), dir, { recursive: true });
    // The tests import the module through a link (python-semver's tests/coerce.py -> ../docs/...).
    await rename(join(dir, 'repo', 'src', 'index.js'), join(dir, 'repo', 'src', 'entry.js'));
    await symlink('entry.js', join(dir, 'repo', 'src', 'index.js'));
    await writeFile(join(dir, 'repo', 'logo.bin'), Buffer.from([0x89, 0x50, 0x00, 0xff, 0xfe]));
    await writeFile(join(dir, 'repo', 'run.sh'), '#!/bin/sh\nnode --test\n', { mode: 0o755 });
    const { row, report } = await buildInstance(await loadSpec(dir));
    expect(report.refused).toEqual([]);
    const dockerless = row?.dockerless as Record<string, unknown>;
    expect(dockerless.symlinks).toEqual({ 'src/index.js': 'entry.js' });
    expect(dockerless.binary_files).toEqual({ 'logo.bin': 'iVAA//4=' });
    expect(dockerless.executables).toEqual(['run.sh']);
    expect(Object.keys(dockerless.files as object)).not.toContain('src/index.js');
    // The row's base commit is the one the local environment makes of the same snapshot.
    const task = rowToTask({ value: row, file: 'row.jsonl', line: 1 });
    const repo = join(scratch, 'links-materialised');
    await mkdir(repo);
    if (task.environment.kind !== 'local' || !task.environment.snapshot) throw new Error('no snapshot');
    await writeSnapshot(repo, task.environment.snapshot);
    expect(await commitBase(repo)).toBe(row?.base_commit);
  });

  it('names the spec file and field of a bad spec', async () => {
    const file = join(scratch, 'bad.json');
    await writeFile(file, JSON.stringify({ instance_id: 'x', repo: 'a/b' }));
    await expect(loadSpec(file)).rejects.toThrow(/bad\.json: test_cmd: missing/);
  });
});
