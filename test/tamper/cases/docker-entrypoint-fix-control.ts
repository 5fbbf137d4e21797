import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "control: the task's own fix on the image with an entrypoint in the work folder: resolved, no finding",
  why: 'shows the calcep task resolves when verified in the fresh container its entrypoint sends the verifier to (docker-entrypoint-rerun)',
  input: { kind: 'harbor', task: 'calcep', solve: "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n" },
  targets: ['docker'],
  expect: { outcome: 'resolved' },
});
