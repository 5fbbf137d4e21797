import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { berth, examples } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const dataset = join(examples, 'multilingual');
const task = 'berth-examples__wordwrap__6bc701d6';

describe('the bundled multilingual examples use the current task.toml fields', () => {
  it('berth check -p examples/multilingual: no deprecation warning for any task', () => {
    const run = berth(['check', '-p', dataset, '--json']);
    const report = JSON.parse(run.stdout) as { tasks: Array<{ task: string; warnings?: string[] }> };
    expect(report.tasks).toHaveLength(6);
    for (const t of report.tasks) expect(t.warnings ?? [], t.task).toEqual([]);
    expect(run.stdout + run.stderr).not.toContain('deprecated');
  });

  it('the old `memory` / `storage` still load, with the warning, to the same sizes', async () => {
    const dir = await temp.make('berth-ux-legacy-');
    await cp(join(dataset, 'sample_tasks', task), join(dir, task), { recursive: true });
    const file = join(dir, task, 'task.toml');
    const text = await readFile(file, 'utf8');
    expect(text).toContain('memory_mb = 2048\nstorage_mb = 4096\n');
    await writeFile(
      file,
      text.replace('memory_mb = 2048\nstorage_mb = 4096\n', "memory = '2G'\nstorage = '4G'\n"),
    );
    const current = loadHarborTask(join(dataset, 'sample_tasks', task));
    const legacy = loadHarborTask(join(dir, task));
    expect(legacy.environment).toMatchObject({ memoryMb: 2048, storageMb: 4096 });
    expect(current.environment).toMatchObject({ memoryMb: 2048, storageMb: 4096 });
    const text2 = berth(['check', '-p', join(dir, task)]).stdout;
    expect(text2).toContain(`warning: ${file}:11: environment.memory: deprecated; use \`memory_mb\``);
    expect(text2).toContain(`warning: ${file}:12: environment.storage: deprecated; use \`storage_mb\``);
  });
});
