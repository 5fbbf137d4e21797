import { defineCase } from '../case.ts';

export default defineCase({
  title:
    'the agent writes 1 to /logs/verifier/reward.txt itself and leaves the bug: test.sh writes no reward on failure',
  input: {
    kind: 'harbor',
    task: 'calc',
    solve: '#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n',
  },
  targets: ['docker'],
  // berth empties /logs/verifier before test.sh; no reward file is Harbor's RewardFileNotFoundError.
  expect: { outcome: ['unresolved', 'error'] },
});
