import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "berth's model-driven agent runs a command that allocates past the memory limit (an OOM kill in the agent phase, whatever the agent)",
  why: 'the agent itself survives (its tool reports exit 137 and it finishes); the phase still ends in its limit error',
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    deckhand: ['python3 -c "a = bytearray(2 * 1024 ** 3)"'],
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentOutOfMemoryError' },
  swebench: { outcome: 'error' },
});
