import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "the oracle's solve.sh allocates past memory_mb (an OOM kill in the agent phase, whatever the agent)",
  input: {
    kind: 'harbor',
    task: 'calc',
    solve: '#!/bin/bash\npython3 -c "a = bytearray(2 * 1024 * 1024 * 1024)"\n',
  },
  targets: ['docker'],
  expect: { outcome: 'error', exception: 'AgentOutOfMemoryError' },
});
