import { defineCase } from '../case.ts';

// Each child waits on a pipe whose writing end only the forking parent holds: the children
// stay until the parent ends (at the refused fork), then leave at once instead of sleeping on.
export default defineCase({
  title: 'the agent command forks until the process limit (a fork bomb in the agent phase)',
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    command:
      'python3 -c "\nimport os\nr, w = os.pipe()\nwhile True:\n    if os.fork() == 0:\n        os.close(w); os.read(r, 1); os._exit(0)\n"',
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentProcessLimitError' },
  swebench: { outcome: 'error' },
});
