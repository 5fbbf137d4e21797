import { appendPython } from '../attacks.ts';
import { defineCase } from '../case.ts';

// 8 files of 32 MiB next to the package: twice the corpus's 128 MiB storage limit.
const attack = `
import os as _os
for _i in range(8):
    try:
        with open(_os.path.join(_os.path.dirname(__file__), "fill-%d" % _i), "wb") as _f:
            _f.write(b"x" * (32 * 1024 * 1024))
    except OSError:
        break
`;

export default defineCase({
  title: 'package code imported by the tests writes past the storage limit (a disk filler in the verifier)',
  input: {
    kind: 'swebench',
    row: 'berth__intervals-1',
    files: { 'intervals/__init__.py': appendPython(attack) },
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'VerifierDiskLimitError' },
  swebench: { outcome: 'error' },
});
