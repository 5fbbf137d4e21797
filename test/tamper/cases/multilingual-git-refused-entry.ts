import { defineCase, sampleTaskFile } from '../case.ts';

const TASK = 'berth-examples__wordwrap__6bc701d6';
const FIX = sampleTaskFile(TASK, 'solution', 'fix.patch');

export default defineCase({
  title:
    'a multilingual agent fixes the source and leaves a `.GIT/x` entry in its work folder, which git refuses to add',
  why: "trust12 (a reviewer found it): taking the agent's diff in the fresh environment failed with a generic Error, which `-r` retries (Harbor's semantics) and a resume runs again: an agent could re-roll a trial at will. Now it is the agent's failure, `AgentWorkError`: reward 0, excluded from retries by default",
  input: {
    kind: 'multilingual',
    task: TASK,
    command: `set -e\ngit apply --whitespace=nowarn <<'FIX'\n${FIX.replace(/\n*$/, '\n')}FIX\nmkdir .GIT\nprintf 'x\\n' > .GIT/x\n`,
  },
  targets: ['local'],
  expect: { outcome: 'error', exception: 'AgentWorkError' },
});
