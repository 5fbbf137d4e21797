import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "control: the task's own fix on the task with a healthcheck script in the work folder: resolved, no finding",
  why: 'shows the calchc task (and its healthcheck) work when nothing is tampered with (docker-healthcheck-rerun)',
  input: { kind: 'harbor', task: 'calchc', solve: "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n" },
  targets: ['docker'],
  expect: { outcome: 'resolved' },
});
