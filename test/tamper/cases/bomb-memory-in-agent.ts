import { defineCase } from '../case.ts';

export default defineCase({
  title: 'the agent command allocates past the memory limit (an OOM kill in the agent phase)',
  input: { kind: 'swebench', row: 'berth__csvline-1', command: 'python3 -c "a = bytearray(2 * 1024 ** 3)"' },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentOutOfMemoryError' },
  swebench: { outcome: 'error' },
});
