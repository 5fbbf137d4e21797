import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "control: the agent fixes the Go task and runs go's tests itself, filling go's build cache in /tmp (GOCACHE=/tmp/go-cache)",
  why: 'what the agent left in /tmp is removed before the verifier runs in its container (harbor-go-forged-test-cache): a real fix still resolves, go compiles again',
  input: {
    kind: 'harbor',
    task: 'gowrap',
    image: 'berth-multilingual:bookworm',
    command: `sed -i 's/"  "/" "/' wrap.go\ngo test -v ./... || true\ngo build ./...\n`,
  },
  targets: ['docker'],
  expect: { outcome: 'resolved' },
});
