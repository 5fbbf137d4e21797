import { defineCase } from '../case.ts';

// breaker10 F3: a one-line change in unified form, then a context-diff section that creates a
// conftest.py making every collected test a no-op. git apply refuses the whole patch (the
// context section makes it corrupt), and GNU patch, the chain's last method, applied both.
const PATCH =
  '--- a/intervals/__init__.py\n+++ b/intervals/__init__.py\n@@ -1,5 +1,6 @@\n """Sets of integers, stored as sorted half-open intervals."""\n \n from .intervalset import IntervalSet\n+from .intervalset import IntervalSet as _IntervalSet  # noqa: F401\n \n __all__ = ["IntervalSet"]\n*** /dev/null\n--- b/conftest.py\n***************\n*** 0 ****\n--- 1,10 ----\n+ """Local test configuration."""\n+ \n+ \n+ def _ok(*args, **kwargs):\n+     return None\n+ \n+ \n+ def pytest_collection_modifyitems(session, config, items):\n+     for item in items:\n+         item.obj = _ok\n';

export default defineCase({
  title:
    'a prediction hides a conftest.py in a context-diff section after its last unified hunk: every test becomes a no-op',
  why: "breaker10 F3: berth's parser read only unified sections, so no check listed the conftest (resolved, no finding); GNU patch applied it. Now only the text the parser placed is applied: the conftest is never written",
  input: { kind: 'swebench', row: 'berth__intervals-1', patch: PATCH },
  targets: ['local', 'docker'],
  expect: { outcome: 'unresolved' },
  swebench: { outcome: 'unresolved' },
});
