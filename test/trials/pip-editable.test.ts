/**
 * No false veto: a row whose test command installs the repository itself (`pip install -e .`, as
 * some SWE-style rows do) regenerates its distribution metadata (`*.egg-info/`, with an
 * `entry_points.txt` for its console scripts) while the tests run. An honest gold patch must stay
 * resolved, with no tamper finding (issue 10; docs/security.md, "Files the run changed"). Real
 * pip, real pytest, the real `berth run`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const temp = tempDirs();
afterAll(temp.cleanup);

/** berth__intervals-1 made installable, with a console script, its tests run after `pip install -e .`. */
function editableRow(name: string): Record<string, unknown> {
  const row = readFileSync(sample, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((r) => r.instance_id === 'berth__intervals-1');
  if (!row) throw new Error('berth__intervals-1 is not in the sample');
  const dockerless = row.dockerless as { files: Record<string, string>; test_cmd: string };
  return {
    ...row,
    instance_id: name,
    dockerless: {
      ...dockerless,
      files: {
        ...dockerless.files,
        'setup.py':
          "from setuptools import setup\n\nsetup(\n    name='intervals',\n    version='0.1',\n    packages=['intervals'],\n    entry_points={'console_scripts': ['intervals-demo=intervals:__name__']},\n)\n",
      },
      // Offline (the tests have no network): Debian's Python, pip, setuptools, wheel and pytest.
      // The sandbox's uid cannot write its site-packages: pip installs for the user (a private home).
      test_cmd: `PIP_BREAK_SYSTEM_PACKAGES=1 ${PY} -m pip install -q --no-deps --no-build-isolation --no-index -e . && ls -d *.egg-info && ${dockerless.test_cmd.replace(/^python3 /, `${PY} `)}`,
    },
  };
}

const PY = '/usr/bin/python3';

/** Whether Debian's python3 can install a setup.py project in editable mode offline, and run pytest. */
function canInstallEditable(): boolean {
  return spawnSync(PY, ['-c', 'import setuptools, pip, wheel, pytest'], { stdio: 'ignore' }).status === 0;
}

describe('a test command that runs pip install -e .', () => {
  it.skipIf(!canInstallEditable())(
    'local: the gold patch is resolved, no tamper finding, though the run wrote the egg-info',
    async () => {
      const jobs = await temp.make('berth-pip-editable-');
      const rows = join(jobs, 'rows.jsonl');
      writeFileSync(rows, `${JSON.stringify(editableRow('pip-editable-1'))}\n`);
      const run = spawnSync(
        process.execPath,
        [bin, 'run', '-p', rows, '-a', 'oracle', '--jobs-dir', jobs, '--job-name', 'j'],
        { env: { ...process.env, CI: '1' }, encoding: 'utf8', timeout: 600_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      const trial = readdirSync(join(jobs, 'j')).find((n) => n.startsWith('pip-editable-1'));
      expect(trial, `no trial folder: ${run.stdout}\n${run.stderr}`).toBeDefined();
      const dir = join(jobs, 'j', trial as string);
      const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
      const output = readFileSync(join(dir, 'verifier', 'test-output.txt'), 'utf8');
      // The install ran and made the metadata in the repository (else this proves nothing).
      expect(output).toContain('intervals.egg-info');
      expect(result.berth.tampering?.findings ?? [], JSON.stringify(result.berth, null, 2)).toEqual([]);
      expect(result.berth.status, JSON.stringify(result.berth, null, 2)).toBe('resolved');
    },
    600_000,
  );
});
