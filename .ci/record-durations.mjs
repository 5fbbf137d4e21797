// Writes test/durations.json (path → seconds, longest first) from vitest's JSON results, for the
// longest-first test order (test/helpers/sequencer.ts). Paths are taken relative to the folder
// holding the results file (CI writes it at the root of the clone it ran in).
// Usage: node .ci/record-durations.mjs [path/to/.vitest-results.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const file = resolve(process.argv[2] ?? '.vitest-results.json');
const ranIn = dirname(file);
const results = JSON.parse(readFileSync(file, 'utf8'));
const rows = results.testResults
  .map((test) => [relative(ranIn, test.name), Math.round((test.endTime - test.startTime) / 100) / 10])
  .filter(([path]) => !path.startsWith('..'))
  .sort((a, b) => b[1] - a[1]);
const out = resolve(import.meta.dirname, '..', 'test', 'durations.json');
writeFileSync(out, `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
console.log(`${relative(process.cwd(), out)}: ${rows.length} files`);
