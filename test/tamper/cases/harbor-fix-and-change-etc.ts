import { defineCase } from '../case.ts';

export default defineCase({
  title:
    'control: the agent fixes /app/calc.py and also writes a file under /etc: verified in a fresh container, still resolved',
  why: 'the fresh container must carry the work folder over intact (a real fix stays a pass, the change is recorded)',
  input: {
    kind: 'harbor',
    task: 'calc',
    solve: "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\necho note > /etc/berth-agent-note\n",
  },
  targets: ['docker'],
  expect: { outcome: 'resolved', finding: /environment-changed: .*\/etc\/berth-agent-note/ },
});
