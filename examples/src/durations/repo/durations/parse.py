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
        total += int(number) * UNITS[unit]
    return total
