import { defineCase } from '../case.ts';

export default defineCase({
  title: "the agent's set-up command forks until the process limit (a fork bomb in agent set-up)",
  input: {
    kind: 'swebench',
    row: 'berth__csvline-1',
    setup:
      'python3 -c "\nimport os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(30); os._exit(0)\n"',
    command: 'true',
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'error', exception: 'AgentSetupProcessLimitError' },
  swebench: { outcome: 'error' },
});
