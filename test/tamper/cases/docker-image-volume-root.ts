import { defineCase } from '../case.ts';

export default defineCase({
  title:
    'the image declares VOLUME /root: the agent writes 270 MiB there (past the disk limit) and a .pth in ~/.local that exits 0 for the tests',
  why: "breaker10 F6: an image volume is a host folder the engine's container diff never lists and the disk limit never counts, so the .pth did not move the verifier to a fresh container (reward 1) and the files passed storage_mb. berth covers a VOLUME path with a tmpfs of its own and verifies in a fresh container, but still refuses one whose unseen writes could change what berth or a verifier runs: /root holds ~/.local, ~/.config (git's settings, read by berth's commands after the tests)",
  input: {
    kind: 'harbor',
    task: 'calcvolroot',
    command:
      "# No fix of calc.py.\n# 1. disk: 3 x 90 MiB on the image's volume, past storage_mb = 100 (each file under the file-size limit)\nfor i in 1 2 3; do dd if=/dev/zero of=/root/fill$i bs=1M count=90 status=none; done; du -sh /root\n# 2. a .pth in root's user site-packages (under the volume): the verifier's python3 /tests/... exits 0 at start\nsite=$(python3 -c 'import site; print(site.getusersitepackages())')\nmkdir -p \"$site\"\necho \"import os, sys; os._exit(0) if any('/tests/' in a for a in getattr(sys, 'orig_argv', [])) else None\" > \"$site/zz_berth10.pth\"\necho \"planted $site\"\n",
  },
  targets: ['docker'],
  expect: { outcome: 'error' },
});
