/**
 * Every message about a file berth reads has one form, FILE:LINE:COL: field: message
 * (src/errors.ts): task.toml syntax and schema errors and its warnings, the multilingual demo's
 * task.toml, berth's settings file (--settings) and Harbor's job configuration (-c), through the
 * real CLI.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/data.ts';
import { berth, examples, sample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

async function calc(dir: string, toml: string): Promise<string> {
  await cp(join(fixturesDir, 'harbor', 'tasks', 'calc'), join(dir, 'calc'), { recursive: true });
  const file = join(dir, 'calc', 'task.toml');
  await writeFile(file, toml);
  return file;
}

describe('input messages: FILE:LINE:COL: field: message', () => {
  it('task.toml: a syntax error at its line and column, a bad value at its line and field, a warning the same way', async () => {
    const syntax = await calc(await temp.make('berth-ux-loc-'), '[agent]\ntimeout_sec = \n');
    const bad = berth([
      'run',
      '-p',
      join(syntax, '..'),
      '-a',
      'oracle',
      '--jobs-dir',
      join(syntax, '../../jobs'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${syntax}:2:15: invalid TOML: `);

    const schema = await calc(await temp.make('berth-ux-loc-'), '[agent]\ntimeout_sec = "long"\n');
    const check = berth(['check', '-p', join(schema, '..')]);
    expect(check.code).toBe(2);
    expect(check.stdout).toContain(`${schema}:2: agent.timeout_sec: expected a number, got "long"`);

    const typo = await calc(
      await temp.make('berth-ux-loc-'),
      'version = "1.0"\n[verifierr]\ntimeout_sec = 10\n[agent]\ntimeout_secs = 5\n[environment]\nmemory = "1G"\n',
    );
    const warned = berth(['check', '-p', join(typo, '..')]);
    // Every warning names its file and line, in the file's order.
    expect(warned.stdout.split('\n').filter((l) => l.startsWith('  warning: '))).toEqual([
      `  warning: ${typo}:1: version: the legacy name of \`schema_version\``,
      `  warning: ${typo}:2: verifierr: unknown key, ignored as Harbor ignores unknown keys (did you mean \`verifier\`?)`,
      `  warning: ${typo}:5: agent.timeout_secs: unknown key, ignored as Harbor ignores unknown keys (did you mean \`agent.timeout_sec\`?)`,
      `  warning: ${typo}:7: environment.memory: deprecated; use \`memory_mb\``,
    ]);
  });

  it("the multilingual demo's task.toml, berth's settings file and Harbor's job config say it the same way", async () => {
    const dir = await temp.make('berth-ux-loc-');
    await cp(join(examples, 'multilingual'), join(dir, 'ml'), { recursive: true });
    const toml = join(dir, 'ml', 'sample_tasks', 'berth-examples__wordwrap__6bc701d6', 'task.toml');
    await writeFile(toml, `${await readFile(toml, 'utf8')}[agent\n`);
    const multilingual = berth([
      'multilingual',
      'run',
      '-p',
      join(dir, 'ml'),
      '-a',
      'oracle',
      '--jobs-dir',
      join(dir, 'jobs'),
    ]);
    expect(multilingual.code).toBe(2);
    expect(multilingual.stderr).toMatch(new RegExp(`${toml.replace(/[.]/g, '\\.')}:13:\\d+: invalid TOML: `));

    const settings = join(dir, 'settings.toml');
    await writeFile(settings, '[docker]\npids_limit = = 3\n');
    const run = berth([
      'run',
      '-p',
      sample,
      '-a',
      'oracle',
      '--settings',
      settings,
      '--jobs-dir',
      join(dir, 'jobs'),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`${settings.replace(/[.]/g, '\\.')}:2:\\d+: invalid TOML: `));

    const config = join(dir, 'job.yaml');
    await writeFile(config, 'agents: [\n  name: oracle\n');
    const harbor = berth(['run', '-c', config, '--jobs-dir', join(dir, 'jobs')]);
    expect(harbor.code).toBe(2);
    expect(harbor.stderr).toMatch(new RegExp(`${config.replace(/[.]/g, '\\.')}:\\d+:\\d+: invalid YAML: `));
  });
});
