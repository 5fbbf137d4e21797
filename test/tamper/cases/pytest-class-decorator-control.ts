import { appendPython } from '../attacks.ts';
import { defineCase } from '../case.ts';

/**
 * Honest test code real suites use that the probe refused (trust19): test classes with class
 * decorators that wrap every test method (unittest.mock's patch and patch.dict, as freezegun's
 * freeze_time does: `@freeze_time` on a plain pytest class, `@mock.patch` on a TestCase), and a
 * test made a proxy that claims the test's file and line, as hypothesis's `@given` makes every
 * test it decorates (hypothesis is not installed here: the same mechanism, in the test file).
 */
export const HONEST_DECORATED_TESTS = `
import functools as _functools
import os as _os
from unittest import TestCase as _TestCase, mock as _mock


def _impersonating(test):
    """As hypothesis's given does: the test becomes a proxy, made with exec, that calls a
    wrapper of the test and claims the test's file and line (code.replace)."""
    def wrapper(*args, **kwargs):
        return test(*args, **kwargs)
    made = {}
    exec("def accept(f):\\n    def proxy(*a, **k):\\n        return f(*a, **k)\\n    return proxy\\n", made)
    proxy = made["accept"](wrapper)
    proxy.__code__ = proxy.__code__.replace(
        co_filename=test.__code__.co_filename, co_firstlineno=test.__code__.co_firstlineno, co_name=test.__name__
    )
    return _functools.wraps(test)(proxy)


@_impersonating
def test_impersonated():
    assert list(IntervalSet([(1, 3), (3, 5)])) == [(1, 5)]


@_mock.patch.dict(_os.environ, {"INTERVALS_CONTROL": "1"})
@_mock.patch("os.getcwd", return_value="/nowhere")
class TestUnderClassPatches:
    def test_patched_while_running(self, getcwd):
        assert _os.getcwd() == "/nowhere" and _os.environ["INTERVALS_CONTROL"] == "1"
        assert list(IntervalSet([(1, 3), (3, 5)])) == [(1, 5)]


@_mock.patch("os.getcwd", return_value="/elsewhere")
class TestCaseUnderClassPatch(_TestCase):
    def test_patched_while_running(self, getcwd):
        self.assertEqual(_os.getcwd(), "/elsewhere")
        self.assertEqual(list(IntervalSet([(1, 3), (3, 5)])), [(1, 5)])
`;

export default defineCase({
  title:
    'control: the gold fix, with test classes whose class decorators (mock.patch, patch.dict) wrap every test method',
  why: "trust19: the probe took a method the test file defines with no decorator of its own for a plain test, so the class decorator's wrapper (unittest/mock.py) it calls was a swap (test-replaced) and the real fix was refused; a wrapper that calls the method's own code is now allowed as a decorated test's; and hypothesis's given (a proxy with the test's file and line by code.replace) was refused as code claiming the test file: a decorated test's proxy now counts as the function it holds",
  input: {
    kind: 'swebench',
    row: 'berth__intervals-1',
    withGold: true,
    files: {},
    rowChanges: { testFiles: { 'tests/test_intervalset.py': appendPython(HONEST_DECORATED_TESTS) } },
  },
  targets: ['local', 'docker'],
  expect: { outcome: 'resolved' },
});
