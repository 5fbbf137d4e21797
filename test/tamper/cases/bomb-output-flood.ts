import { prependJs } from '../attacks.ts';
import { defineCase } from '../case.ts';

// 80 MiB on stdout from the module the tests import, past the 50 MiB output cap: the captured
// log stops at its cap (and the trial folder stays under 64 MiB, which an uncut log would not).
const attack = `const __berthChunk = 'x'.repeat(1 << 20) + '\\n';
for (let i = 0; i < 80; i++) process.stdout.write(__berthChunk);
`;

export default defineCase({
  title: 'the code under test floods stdout with 80 MiB (the log is cut at its cap, never a pass)',
  input: { kind: 'swebench', row: 'berth__csvline-1', files: { 'lib/csvline.js': prependJs(attack) } },
  targets: ['local', 'docker'],
  // The test log is kept up to the 50 MiB output cap (local and Docker alike). Where the cut
  // falls in the stream varies with load, and a cut through the node guard's records reads as
  // guard-invalid (tampering; seen once under heavy load): never a pass either way.
  expect: { outcome: ['unresolved', 'error', 'tampering'], trialBytesAtMost: 64 * 1024 * 1024 },
  swebench: { outcome: ['unresolved', 'error'], trialBytesAtMost: 64 * 1024 * 1024 },
});
