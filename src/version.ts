import { readFileSync } from 'node:fs';

/** berth's version, from package.json. Recorded in every trial result (resume checks it). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
