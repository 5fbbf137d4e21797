import { defineCase } from '../case.ts';

// 160 MiB on stdout, past the corpus's 128 MiB storage: the set-up log is a file of the
// environment's log folder, so the flood fills the writable space and reaches the jobs folder
// only up to berth's copy cap.
export default defineCase({
  title: "the agent's set-up command floods stdout with 160 MiB (output and disk in agent set-up)",
  input: {
    kind: 'swebench',
    row: 'berth__toposort-1',
    setup: 'head -c 167772160 /dev/zero',
    command: 'true',
  },
  targets: ['local', 'docker'],
  expect: {
    outcome: 'error',
    exception: /^AgentSetup(Disk|FileSize)LimitError$/,
    trialBytesAtMost: 130 * 1024 * 1024,
  },
  swebench: { outcome: 'error' },
});
