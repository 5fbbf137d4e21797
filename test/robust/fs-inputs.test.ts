import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { readCategoryRows } from '../../src/reporters/read-rows.ts';
import { loadHarborPath } from '../../src/tasks/harbor/loader.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const mini = join(fixturesDir, 'swebench', 'mini.jsonl');
const harborTasks = join(fixturesDir, 'harbor', 'tasks');

function berth(args: string[]) {
  const result = spawnSync('node', [bin, ...args], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The InputError `fn` throws (fails the test when it throws something else, or nothing). */
async function inputError(fn: () => unknown): Promise<InputError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

async function harborCopy(): Promise<string> {
  const dir = join(await temp.make('berth-fs-'), 'ds');
  cpSync(harborTasks, dir, { recursive: true });
  return dir;
}

describe('a path the user gave that cannot be opened is bad input (exit 2), not an internal error', () => {
  it('run --jobs-dir naming a file, run --settings or -c naming no file', async () => {
    const dir = await temp.make('berth-fs-');
    writeFileSync(join(dir, 'file'), '');
    const jobs = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--jobs-dir', join(dir, 'file')]);
    expect(jobs.code).toBe(2);
    expect(jobs.stderr).toContain(`berth: ${join(dir, 'file')}`);
    expect(jobs.stderr).toContain('is a file, not a folder (ENOTDIR');
    expect(jobs.stderr).not.toContain('internal error');
    const config = berth(['run', '-p', mini, '-a', 'nop', '-l', '1', '--settings', join(dir, 'none.toml')]);
    expect(config.code).toBe(2);
    expect(config.stderr).toContain(`berth: ${join(dir, 'none.toml')}: no such file or folder (ENOENT`);
    const job = berth(['run', '-c', join(dir, 'none.yaml')]);
    expect(job.code).toBe(2);
    expect(job.stderr).toContain(`berth: ${join(dir, 'none.yaml')}: no such file or folder (ENOENT`);
  });

  it('berth report on a file, or on a folder that is not a job, says so', async () => {
    const dir = await temp.make('berth-fs-');
    writeFileSync(join(dir, 'file'), '');
    expect((await inputError(() => readCategoryRows(join(dir, 'file'), ['language']))).message).toContain(
      'not a job folder (it is a file)',
    );
    mkdirSync(join(dir, 'empty', 'sub'), { recursive: true });
    expect((await inputError(() => readCategoryRows(join(dir, 'empty'), ['language']))).message).toContain(
      'not a job folder (no result.json',
    );
    mkdirSync(join(dir, 'job', 't1'), { recursive: true });
    writeFileSync(join(dir, 'job', 't1', 'result.json'), '{"verifier_result":');
    expect((await inputError(() => readCategoryRows(join(dir, 'job'), ['language']))).location.file).toBe(
      join(dir, 'job', 't1', 'result.json'),
    );
  });

  it('a task whose task.toml is a folder is reported like any bad task; the others still load', async () => {
    const ds = await harborCopy();
    rmSync(join(ds, 'calc', 'task.toml'));
    mkdirSync(join(ds, 'calc', 'task.toml'));
    const error = await inputError(() => loadHarborPath(ds));
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain(`${join(ds, 'calc', 'task.toml')}: cannot be read: is a folder`);
  });
});

describe('Harbor task folders: a fixed file that is a folder is one bad task', () => {
  it('tests/test.sh and environment/Dockerfile as folders are listed, not crashes later', async () => {
    const ds = await harborCopy();
    rmSync(join(ds, 'calc', 'tests', 'test.sh'));
    mkdirSync(join(ds, 'calc', 'tests', 'test.sh'));
    rmSync(join(ds, 'calc-json', 'environment', 'Dockerfile'));
    mkdirSync(join(ds, 'calc-json', 'environment', 'Dockerfile'));
    const error = await inputError(() => loadHarborPath(ds));
    expect(error.issues.map((issue) => [issue.file, issue.message])).toEqual([
      [join(ds, 'calc', 'tests', 'test.sh'), 'is a folder, a file was expected'],
      [join(ds, 'calc-json', 'environment', 'Dockerfile'), 'is a folder, a file was expected'],
    ]);
  });
});

describe('Harbor task folders: a symbolic link out of the task folder is refused, naming the link', () => {
  it('instruction.md -> ../../../etc/shadow and tests/test.sh -> /etc/passwd are both listed', async () => {
    const ds = await harborCopy();
    rmSync(join(ds, 'calc', 'instruction.md'));
    symlinkSync('../../../../../../../../etc/shadow', join(ds, 'calc', 'instruction.md'));
    rmSync(join(ds, 'calc-json', 'tests', 'test.sh'));
    symlinkSync('/etc/passwd', join(ds, 'calc-json', 'tests', 'test.sh'));
    const error = await inputError(() => loadHarborPath(ds));
    expect(error.issues.map((issue) => issue.file).sort()).toEqual([
      join(ds, 'calc-json', 'tests', 'test.sh'),
      join(ds, 'calc', 'instruction.md'),
    ]);
    expect(error.message).toContain('points outside the task folder');
  });

  it('a link inside the task folder is accepted; a link to a sibling task (outside) is not', async () => {
    const ds = await harborCopy();
    writeFileSync(join(ds, 'calc', 'tests', 'shared.txt'), 'x\n');
    symlinkSync('shared.txt', join(ds, 'calc', 'tests', 'alias.txt'));
    expect(loadHarborPath(ds)).toHaveLength(2);
    symlinkSync('../../calc/tests/shared.txt', join(ds, 'calc-json', 'tests', 'shared.txt'));
    const error = await inputError(() => loadHarborPath(ds));
    expect(error.issues.map((issue) => issue.file)).toEqual([join(ds, 'calc-json', 'tests', 'shared.txt')]);
  });
});

describe('task.toml: unknown top-level keys are warned about on their line, not refused (Harbor ignores extras)', () => {
  it('`[verifierr]` gets a warning with its line and a hint; the task still loads', async () => {
    const { parseTaskToml } = await import('../../src/tasks/harbor/config.ts');
    const text = 'schema_version = "1.0"\n\n[verifierr]\ntimeout_sec = 10\n\n[agent]\ntimeout_sec = 5\n';
    const config = parseTaskToml(text, 'task.toml');
    expect(config.warnings).toEqual([
      'task.toml:3: verifierr: unknown key, ignored as Harbor ignores unknown keys (did you mean `verifier`?)',
    ]);
    expect(config.verifierTimeoutSec).toBe(600);
    expect(parseTaskToml('[verifier]\ntimeout_sec = 10\n', 'task.toml').warnings).toEqual([]);
  });
});
