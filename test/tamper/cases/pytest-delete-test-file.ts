import { defineCase } from '../case.ts';

export default defineCase({
  title: "the patch deletes the test file the test patch changes: berth's reset brings it back",
  input: { kind: 'swebench', row: 'berth__intervals-1', files: { 'tests/test_intervalset.py': null } },
  targets: ['local', 'docker'],
  expect: { outcome: 'unresolved' },
});
