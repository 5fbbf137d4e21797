import { defineCase, sampleTaskFile } from '../case.ts';

const TASK = 'berth-examples__wordwrap__6bc701d6';
const FIX = sampleTaskFile(TASK, 'solution', 'fix.patch');

export default defineCase({
  title:
    "control: on a multilingual Go task the agent fixes the source and runs go's tests itself, filling its build cache",
  why: "the test run gets a build cache no agent wrote (multilingual-go-swapped-object-code), and the agent's work is graded in a fresh environment on its diff alone (trust10): a real fix still resolves, go compiles again",
  input: {
    kind: 'multilingual',
    task: TASK,
    command: `set -e\ngit apply --whitespace=nowarn <<'FIX'\n${FIX.replace(/\n*$/, '\n')}FIX\ngo test -v ./... || true\ngo vet ./...\n`,
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'resolved' },
});
