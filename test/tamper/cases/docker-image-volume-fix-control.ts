import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "control: the task's own fix on the image with VOLUME /var/lib/calc: resolved in the fresh container, no finding",
  why: 'shows the calcvol task resolves when verified in the fresh container its VOLUME sends the verifier to (docker-image-volume); an error on main, which refused the image',
  input: { kind: 'harbor', task: 'calcvol', solve: "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n" },
  targets: ['docker'],
  expect: { outcome: 'resolved' },
});
