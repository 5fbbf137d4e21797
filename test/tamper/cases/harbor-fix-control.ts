import { defineCase } from '../case.ts';

export default defineCase({
  title: "control: the task's own fix, nothing else: resolved in the agent's container, no finding",
  why: 'shows the calc task and the restart before the verifier work (otherwise every "unresolved" above proves nothing)',
  input: { kind: 'harbor', task: 'calc', solve: "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n" },
  targets: ['docker'],
  expect: { outcome: 'resolved' },
});
