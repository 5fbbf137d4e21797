import { defineCase } from '../case.ts';

// As bomb-output-in-agent-setup, in the agent phase: stdout.txt fills the writable space.
export default defineCase({
  title: 'the agent command floods stdout with 160 MiB (output and disk in the agent phase)',
  input: { kind: 'swebench', row: 'berth__toposort-1', command: 'head -c 167772160 /dev/zero' },
  targets: ['local', 'docker'],
  expect: {
    outcome: 'error',
    exception: /^Agent(Disk|FileSize)LimitError$/,
    trialBytesAtMost: 130 * 1024 * 1024,
  },
  swebench: { outcome: 'error' },
});
