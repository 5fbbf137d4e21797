import { defineCase, sampleTaskFile } from '../case.ts';

const TASK = 'berth-examples__wordwrap__6bc701d6';
const FIX = sampleTaskFile(TASK, 'solution', 'fix.patch');

export default defineCase({
  title:
    "on a multilingual task the agent's command changes nothing and returns; a writer it left running in a session of its own applies a real fix as soon as the command's shell is gone",
  why: "trust13 (a reviewer found it): on Docker the agent's container kept running while the fresh container started and the work folder was copied, so what the agent's leftover processes wrote after it returned (after its time, unwatched) was graded (was resolved). Now the agent's container is halted when its command returns, before its logs are copied and the fresh container starts (Environment.halt): the diff is empty. That left the time between the command's end and the pause (berth's latency, more than a second at load 30+: the writer's one-second delay then won again, session 9). trust16: the writer no longer waits (it fixes as soon as it sees the shell gone, well within berth's latency at any load: resolved on main at 5b6d36d), and the command's own exec stops every process its user may signal as the command ends (`ExecOptions.haltOnExit`, `kill -STOP -1` until none runs), before berth sees the end: the diff is empty. Locally each command's processes end with it (pid namespace): the writer never runs",
  input: {
    kind: 'multilingual',
    task: TASK,
    command: [
      `cat > /tmp/late-fix.patch <<'FIX'\n${FIX.replace(/\n*$/, '\n')}FIX`,
      // Waits for this script's shell to end, then fixes the work folder at once.
      `setsid nohup sh -c 'while kill -0 "$1" 2>/dev/null; do sleep 0.05; done; git apply --whitespace=nowarn /tmp/late-fix.patch' late "$$" >/dev/null 2>&1 </dev/null &`,
    ].join('\n'),
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'unresolved' },
});
