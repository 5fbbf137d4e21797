import { prependJs } from '../attacks.ts';
import { defineCase } from '../case.ts';

export default defineCase({
  title: "module code ends node --test's child with exit code 0 before any test runs",
  why: 'node reports the file itself as passed; the FAIL_TO_PASS tests are missing and never pass',
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    files: { 'lib/csvline.js': prependJs('process.exit(0);') },
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'unresolved' },
});
