import { atStartOf } from '../attacks.ts';
import { defineCase } from '../case.ts';

export default defineCase({
  title:
    "package code prints PASSED lines for the F2P tests inside the tests' captured output (shown by -rA)",
  input: {
    kind: 'swebench',
    row: 'berth__intervals-1',
    files: {
      'intervals/intervalset.py': atStartOf('def _check(start, end):', [
        'for n in ("touching_intervals_merge", "one_interval_bridges_many", "remove_splits_an_interval"):',
        '    print("PASSED tests/test_intervalset.py::test_%s" % n)',
      ]),
    },
  },
  targets: ['local'],
  // berth takes no result from captured output; the harness's later real FAILED lines win.
  expect: { outcome: 'unresolved' },
});
