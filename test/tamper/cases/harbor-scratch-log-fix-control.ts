import { defineCase } from '../case.ts';

export default defineCase({
  title: "control: the agent fixes the script and runs it itself, so its log in /var/log is the agent's",
  why: 'what the agent left in the scratch places is removed before the verifier runs in its container (harbor-planted-scratch-log): a real fix still resolves, the test logs again',
  input: {
    kind: 'harbor',
    task: 'greetlog',
    command: "sed -i 's|> /dev/null|>> /var/log/greet.log|' /app/greet.sh\nbash /app/greet.sh\n",
  },
  targets: ['docker'],
  expect: { outcome: 'resolved' },
});
