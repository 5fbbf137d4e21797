import { defineCase, sampleTaskFile } from '../case.ts';

const TASK = 'berth-examples__wordwrap__6bc701d6';
const FIX = sampleTaskFile(TASK, 'solution', 'fix.patch');

export default defineCase({
  title:
    'on a multilingual task the agent fixes the source and leaves 100 GiB of sparse files in its work folder (800 of 128 MiB, each within the file size limit, none taking disk)',
  why: "trust13 (a reviewer found it): the work folder is carried into the fresh environment as a tar stream, which stores files expanded: Docker's engine would have written 100 GiB into the fresh container's layer on the host's disk (locally, berth's tar streamed 100 GiB into a sandboxed tar -x filling the fresh tmpfs). Now the stream is bounded by the disk limit (src/util/tar-bound.ts), the first entry past it refused at its header: AgentWorkError, the agent's failure (reward 0, not retried), in seconds. Local only: on Docker where berth watches the writable layer (overlay2 on ext4, as here), the engine's SizeRw counts sparse files at their full size, so the agent phase already ends with AgentDiskLimitError; where a storage quota counts blocks instead, the copy's bound refuses them (test/docker/agent-work.test.ts takes such a folder from a container)",
  input: {
    kind: 'multilingual',
    task: TASK,
    command: [
      'set -e',
      `git apply --whitespace=nowarn <<'FIX'\n${FIX.replace(/\n*$/, '\n')}FIX`,
      `python3 -c 'for i in range(1, 801): open(f"sparse-{i}.bin", "wb").truncate(128 << 20)'`,
    ].join('\n'),
  },
  targets: ['local'],
  expect: { outcome: 'error', exception: 'AgentWorkError' },
});
