/**
 * A Harbor dataset with one invalid task: the loader keeps the valid tasks and lists the invalid
 * one with its file, line and key (berth run runs the rest and exits 2); a single invalid task
 * folder, or a dataset with no valid task, is still refused (issue 12).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { loadHarborDataset, loadHarborPath } from '../../src/tasks/harbor/loader.ts';
import { loadTasks } from '../../src/tasks/registry.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const calc = join(fixturesDir, 'harbor', 'tasks', 'calc');

async function dataset(bad: Record<string, string>): Promise<string> {
  const dir = await temp.make('berth-harbor-ds-');
  for (const name of ['a-good', 'b-coerced', ...Object.keys(bad)])
    cpSync(calc, join(dir, name), { recursive: true });
  const toml = (name: string) => join(dir, name, 'task.toml');
  writeFileSync(toml('b-coerced'), readFileSync(toml('b-coerced'), 'utf8').replace('cpus = 1', 'cpus = "1"'));
  for (const [name, change] of Object.entries(bad))
    writeFileSync(toml(name), readFileSync(toml(name), 'utf8').replace('cpus = 1', change));
  return dir;
}

describe('Harbor datasets with invalid tasks', () => {
  it('the valid tasks load; the invalid one is listed with file, line and key', async () => {
    const dir = await dataset({ 'c-bad': 'cpus = "four"' });
    const loaded = await loadTasks(dir);
    expect(loaded.format).toBe('harbor');
    expect(loaded.tasks.map((t) => t.name)).toEqual(['a-good', 'b-coerced']);
    expect(loaded.skipped).toHaveLength(1);
    expect(loaded.skipped[0]?.dir).toBe(join(dir, 'c-bad'));
    expect(loaded.skipped[0]?.issues).toEqual([
      {
        file: join(dir, 'c-bad', 'task.toml'),
        line: 22,
        field: 'environment.cpus',
        message: 'expected a number, got "four"',
      },
    ]);
    // The strict loader (berth check, library callers) still refuses the dataset.
    expect(() => loadHarborPath(dir)).toThrow(InputError);
  });

  it('no valid task left, or a single invalid task folder: refused (exit 2)', async () => {
    const dir = await dataset({ 'c-bad': 'cpus = "four"' });
    for (const name of ['a-good', 'b-coerced'])
      writeFileSync(join(dir, name, 'task.toml'), 'version = "1.0"\n[agent]\ntimeout_sec = "soon"\n');
    expect(() => loadHarborDataset(dir)).toThrow(/3 problems in 3 files/);
    expect(() => loadHarborDataset(join(dir, 'c-bad'))).toThrow(/:22: environment\.cpus/);
  });
});
