/**
 * Files that decide how tests are collected and reported rather than what the code does:
 * a patch that creates or changes one can make failing tests report as passing (a root
 * `conftest.py` whose `pytest_runtest_makereport` hook rewrites outcomes, a `pytest.py`
 * shadowing the runner, a `sitecustomize.py` or `.pth` file run at interpreter start-up).
 *
 * The SWE-bench harness grades such patches like any other (its issue #631: files the model
 * adds that the test patch does not mention are never reset), and berth keeps that verdict so
 * results stay comparable; it records the paths and says so in the trial's note, so they can
 * be reviewed.
 */
import { posix } from 'node:path';
import { patchFiles } from '../util/patch-files.ts';

/** Base names that configure or replace the test runner (pytest, Python start-up, JS runners). */
const RUNNER_FILES = new Set([
  'conftest.py',
  'pytest.ini',
  'pytest.py',
  'sitecustomize.py',
  'usercustomize.py',
  'jest.config.js',
  'jest.config.ts',
  'vitest.config.ts',
  'vitest.config.js',
  '.mocharc.js',
  '.mocharc.json',
  '.mocharc.yml',
]);

/**
 * The paths a patch creates or changes (deleted files left out) that configure or replace
 * the test runner: see the list above, plus `*.pth` files and anything under a `_pytest/`
 * or `pytest/` folder. Sorted, without duplicates; [] for a patch without any.
 */
export function testInfrastructurePaths(patch: string): string[] {
  const found = new Set<string>();
  for (const file of patchFiles(patch)) {
    const path = file.newPath;
    if (!path) continue;
    const base = posix.basename(path);
    const parts = path.split('/');
    if (
      RUNNER_FILES.has(base) ||
      base.endsWith('.pth') ||
      parts.slice(0, -1).some((dir) => dir === '_pytest' || dir === 'pytest')
    )
      found.add(path);
  }
  return [...found].sort();
}
