import { defineCase } from '../case.ts';

// Each child waits on a pipe whose writing end only the forking parent holds: the children
// stay until the parent ends (at the refused fork), then leave at once instead of sleeping on.
export default defineCase({
  title: "the agent's set-up command forks until the process limit (a fork bomb in agent set-up)",
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    setup:
      'python3 -c "\nimport os\nr, w = os.pipe()\nwhile True:\n    if os.fork() == 0:\n        os.close(w); os.read(r, 1); os._exit(0)\n"',
    command: 'true',
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentSetupProcessLimitError' },
  swebench: { outcome: 'error' },
});
