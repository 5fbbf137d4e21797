import { readFileSync } from 'node:fs';
import { packagePath } from './util/package-root.ts';

/** berth's version, from package.json. Recorded in every trial result (resume checks it). */
export const VERSION: string = (
  JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }
).version;
