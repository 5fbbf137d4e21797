import { defineCase } from '../case.ts';

export default defineCase({
  title: 'the agent command forks until the process limit (a fork bomb in the agent phase)',
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    command:
      'python3 -c "\nimport os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(30); os._exit(0)\n"',
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentProcessLimitError' },
  swebench: { outcome: 'error' },
});
