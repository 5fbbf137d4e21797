import { appendPython } from '../attacks.ts';
import { defineCase } from '../case.ts';

// Package code the tests import forks until the process limit refuses (each child sleeps).
const attack = `
import os as _os, time as _time
try:
    while True:
        if _os.fork() == 0:
            _time.sleep(30)
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
