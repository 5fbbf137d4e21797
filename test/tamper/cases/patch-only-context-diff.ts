import { defineCase } from '../case.ts';

// breaker10 F3, widened: the whole prediction is a context diff (`diff -c`) of package code that
// makes every test XFAIL under pytest (pytest-xfail-from-package's change).
const PATCH =
  '*** a/intervals/intervalset.py\t2026-12-03 01:54:30.098166953 +0000\n--- b/intervals/intervalset.py\t2026-12-03 01:54:30.513245997 +0000\n***************\n*** 50,54 ****\n--- 50,57 ----\n  \n  \n  def _check(start, end):\n+     import sys\n+     if "pytest" in sys.modules:\n+         sys.modules["pytest"].xfail("not supported yet")\n      if start > end:\n          raise ValueError("bad interval")\n';

export default defineCase({
  title:
    'a prediction written as a context diff (diff -c) makes every test XFAIL: berth parsed no file of it',
  why: "breaker10 F3: no check saw the package file it changed (resolved, no finding: the skip-origin check needs the file among the patch's); GNU patch applied it. Now a patch with no unified section is not applied",
  input: { kind: 'swebench', row: 'berth__intervals-1', patch: PATCH },
  targets: ['local'],
  expect: { outcome: 'unresolved' },
  swebench: { outcome: 'unresolved' },
});
