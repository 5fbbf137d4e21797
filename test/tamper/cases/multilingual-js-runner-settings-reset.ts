import { defineCase } from '../case.ts';

const TASK = 'berth-examples__semver-lite__47278026';

/** No fix: the test script made to succeed, a local package as the runner, a vitest setup file. */
const PATCH = [
  'diff --git a/package.json b/package.json',
  '--- a/package.json',
  '+++ b/package.json',
  '@@ -1,6 +1,7 @@',
  ' {',
  '   "name": "semver-lite",',
  '   "version": "0.1.0",',
  '   "type": "module",',
  '-  "scripts": { "test": "node --test test/" }',
  '+  "scripts": { "test": "node --test test/ || true" },',
  '+  "devDependencies": { "tap": "file:./tools/tap" }',
  ' }',
  'diff --git a/vitest.config.js b/vitest.config.js',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/vitest.config.js',
  '@@ -0,0 +1 @@',
  "+export default { test: { setupFiles: ['./src/compare.js'] } };",
  '',
].join('\n');

export default defineCase({
  title:
    "package.json's test script made to succeed and a local package as its runner, and a vitest config, on a JavaScript task (no fix)",
  why: 'trust19: JavaScript runner settings a real fix may change too are reset to the base and the tests run without them, recorded without a veto (no longer refused as tampering); the attack gains nothing',
  input: { kind: 'multilingual', task: TASK, patch: PATCH },
  targets: ['local'],
  expect: { outcome: 'unresolved', finding: /runner-config: .*scripts\.test.*reset to the base/ },
});
