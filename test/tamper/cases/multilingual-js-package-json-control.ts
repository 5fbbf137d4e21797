import { defineCase, sampleTaskFile } from '../case.ts';

const TASK = 'berth-examples__semver-lite__47278026';
const FIX = sampleTaskFile(TASK, 'solution', 'fix.patch');

/** The fix, with what real fixes change in package.json: engines, a devDependency's version. */
const PACKAGE = [
  'diff --git a/package.json b/package.json',
  '--- a/package.json',
  '+++ b/package.json',
  '@@ -1,6 +1,8 @@',
  ' {',
  '   "name": "semver-lite",',
  '   "version": "0.1.0",',
  '   "type": "module",',
  '-  "scripts": { "test": "node --test test/" }',
  '+  "scripts": { "test": "node --test test/" },',
  '+  "engines": { "node": ">=18" },',
  '+  "devDependencies": { "tap": "^16.3.0" }',
  ' }',
  '',
].join('\n');

export default defineCase({
  title:
    "control: a JavaScript task's real fix that also sets engines and a devDependency's version (tap) in package.json",
  why: 'trust19: the patch layer matched any changed package.json line naming "tap", "jest", "mocha"... and the multilingual verifier refused such a fix as tampering (npm/node-semver bumped tap in its fix commits); package.json is now read by its keys: versions and engines are a fix\'s business',
  input: { kind: 'multilingual', task: TASK, patch: `${FIX.replace(/\n*$/, '\n')}${PACKAGE}` },
  targets: ['local'],
  expect: { outcome: 'resolved' },
});
