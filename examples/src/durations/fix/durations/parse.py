"""Parsing of durations."""

import re

#: Seconds per unit.
UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}

#: Units from largest to smallest; components must follow this order.
_ORDER = ("w", "d", "h", "m", "s", "ms")


class DurationError(ValueError):
    """Raised for text that is not a duration."""


_COMPONENT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)")


def parse_duration(text):
    """Return the number of seconds ``text`` stands for (``"1h30m"`` -> ``5400``).

    Components are a number (decimals allowed) and a unit, largest unit first,
    each unit at most once, optionally separated by spaces. A leading ``-``
    negates the whole duration. Anything else raises ``DurationError``.
    """
    s = text.strip().lower()
    if not s:
        raise DurationError("empty duration")
    sign = 1
    if s.startswith("-"):
        sign = -1
        s = s[1:]
    total = 0
    position = 0
    last_rank = -1
    while position < len(s):
        match = _COMPONENT.match(s, position)
        if match is None:
            raise DurationError(f"invalid duration: {text!r}")
        number, unit = match.groups()
        if unit not in UNITS:
            raise DurationError(f"unknown unit {unit!r}")
        rank = _ORDER.index(unit)
        if rank <= last_rank:
            raise DurationError(f"unit {unit!r} out of order in {text!r}")
        last_rank = rank
        total += _number(number) * UNITS[unit]
        position = match.end()
    if position == 0:
        raise DurationError(f"invalid duration: {text!r}")
    return sign * total


def sum_durations(texts):
    """Return the total number of seconds of several durations.

    >>> sum_durations(["1h", "30m"])
    5400
    """
    return sum(parse_duration(text) for text in texts)


def _number(digits):
    """The value of the number in one component: an int, or a float for ``1.5``."""
    return float(digits) if "." in digits else int(digits)
