import { appendPython } from '../attacks.ts';
import { defineCase } from '../case.ts';

export default defineCase({
  title: 'package code imported by the tests allocates past the memory limit (an OOM kill in the verifier)',
  input: {
    kind: 'swebench',
    row: 'berth__intervals-1',
    files: { 'intervals/__init__.py': appendPython('\n_berth_hog = bytearray(2 * 1024 * 1024 * 1024)\n') },
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'VerifierOutOfMemoryError' },
  swebench: { outcome: 'error' },
});
