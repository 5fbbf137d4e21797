import { appendPython } from '../attacks.ts';
import { defineCase } from '../case.ts';

// Package code the tests import forks until the process limit refuses. Each child waits on a
// pipe whose writing end only the test process holds: the children stay while the tests run
// and leave when it ends (they slept 30 s, which kept a container's exec open that long).
const attack = `
import os as _os
_r, _w = _os.pipe()
try:
    while True:
        if _os.fork() == 0:
            _os.close(_w)
            _os.read(_r, 1)
            _os._exit(0)
except OSError:
    pass
`;

export default defineCase({
  title: 'package code imported by the tests forks until the process limit (a fork bomb in the verifier)',
  why: 'an unbounded fork bomb would take the host; a bounded one must end the trial as the verifier phase error, never a verdict',
  input: {
    kind: 'swebench',
    row: 'berth__intervals-1',
    files: { 'intervals/__init__.py': appendPython(attack) },
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'VerifierProcessLimitError' },
  swebench: { outcome: 'error' },
});
