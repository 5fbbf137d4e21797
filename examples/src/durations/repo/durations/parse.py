"""Parsing of durations."""

import re

#: Seconds per unit.
UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}


class DurationError(ValueError):
    """Raised for text that is not a duration."""


_TOKEN = re.compile(r"(\d+)([a-z]+)")


def parse_duration(text):
    """Return the number of seconds ``text`` stands for (``"1h30m"`` -> ``5400``)."""
    s = text.strip().lower()
    if not s:
        raise DurationError("empty duration")
    total = 0
    for number, unit in _TOKEN.findall(s):
        if unit not in UNITS:
            raise DurationError(f"unknown unit {unit!r}")
        total += _number(number) * UNITS[unit]
    return total


def sum_durations(texts):
    """Return the total number of seconds of several durations.

    >>> sum_durations(["1h", "30m"])
    5400
    """
    return sum(parse_duration(text) for text in texts)


def _number(digits):
    """The value of the number in one component."""
    return int(digits)
