/**
 * Test files longest first (the longest-processing-time rule), from `test/durations.json`: the
 * seconds each file took in CI. vitest's own ordering uses its results cache
 * (`node_modules/.vite`), which a fresh clone does not have; it then runs larger files first, and
 * a long file that happens to be small (one JVM reference run, 138 s) started last and ran alone
 * at the end of CI. Files the table does not know are placed as if they took
 * {@link UNKNOWN_SECONDS}, or what vitest's cache says when it has them.
 *
 * `BERTH_TEST_ORDER=shortest-first` reverses the order: CI's Node 22 run (one worker, beside the
 * Node 20 run) then meets the long files when the Node 20 run has left them, not at the same time.
 *
 * Refresh the table from a CI run's JSON results: `node .ci/record-durations.mjs
 * .vitest-results.json`.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds assumed for a file the table does not list (a new file). */
export const UNKNOWN_SECONDS = 20;

/** The table: path relative to the repository's root → seconds (as CI measured them). */
export function readDurations(root: string): Record<string, number> {
  try {
    const table = JSON.parse(readFileSync(join(root, 'test', 'durations.json'), 'utf8')) as unknown;
    if (table === null || typeof table !== 'object') return {};
    return Object.fromEntries(
      Object.entries(table).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
    );
  } catch {
    return {};
  }
}

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const table = readDurations(root);
    const seconds = (file: TestSpecification): number => {
      const path = relative(root, file.moduleId);
      const known = table[path];
      if (known !== undefined) return known;
      const cached = this.ctx.cache.getFileTestResults(`${file.project.name}:${path}`);
      return cached ? cached.duration / 1000 : UNKNOWN_SECONDS;
    };
    const longestFirst = [...files]
      .map((file) => ({ file, seconds: seconds(file) }))
      .sort((a, b) => b.seconds - a.seconds)
      .map(({ file }) => file);
    return process.env.BERTH_TEST_ORDER === 'shortest-first' ? longestFirst.reverse() : longestFirst;
  }
}
