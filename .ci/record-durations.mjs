// Writes test/durations.json (path → seconds, longest first), for the longest-first test order
// (test/helpers/sequencer.ts), from the file CI's durations reporter wrote
// (test/helpers/durations-reporter.ts, `BERTH_DURATIONS_OUT=.vitest-durations.json` in .ci/run).
// Not from vitest's JSON results: their per-file times leave out hooks, so the tamper corpus (its
// cases run in beforeAll, 768 s) read as 2 s and was run last.
// Usage: node .ci/record-durations.mjs [path/to/.vitest-durations.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const file = resolve(process.argv[2] ?? '.vitest-durations.json');
const table = JSON.parse(readFileSync(file, 'utf8'));
const rows = Object.entries(table)
  .filter(([path, seconds]) => typeof seconds === 'number' && !path.startsWith('..'))
  .sort((a, b) => b[1] - a[1]);
const out = resolve(import.meta.dirname, '..', 'test', 'durations.json');
writeFileSync(out, `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
console.log(`${relative(process.cwd(), out)}: ${rows.length} files`);
