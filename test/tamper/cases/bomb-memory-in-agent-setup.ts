import { defineCase } from '../case.ts';

export default defineCase({
  title: "the agent's set-up command allocates past the memory limit (an OOM kill in agent set-up)",
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    setup: 'python3 -c "a = bytearray(2 * 1024 ** 3)"',
    command: 'true',
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentSetupOutOfMemoryError' },
  swebench: { outcome: 'error' },
});
