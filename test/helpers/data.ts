import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the shared real data: `BERTH_DATA`, default `../shared/data` beside the repository. */
export const dataDir = resolve(
  process.env.BERTH_DATA ?? resolve(fileURLToPath(new URL('../..', import.meta.url)), '..', 'shared', 'data'),
);

/** True when the shared data folder is present (tests reading it skip otherwise). */
export const hasData = existsSync(dataDir);

/** The repository's test fixtures folder. */
export const fixturesDir = fileURLToPath(new URL('../fixtures', import.meta.url));
