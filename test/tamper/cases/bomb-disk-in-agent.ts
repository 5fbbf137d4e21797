import { defineCase } from '../case.ts';

// Files of 32 MiB under .git/ (out of the agent's diff) past the corpus's 128 MiB storage.
export default defineCase({
  title: 'the agent command writes files past the storage limit (a disk filler in the agent phase)',
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    command: 'for i in 1 2 3 4 5 6; do head -c 33554432 /dev/zero > .git/fill.$i || break; done',
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentDiskLimitError' },
  swebench: { outcome: 'error' },
});
