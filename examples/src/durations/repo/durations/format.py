"""Formatting of durations."""

_PARTS = (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def format_duration(seconds):
    """Format a whole number of seconds as ``1h30m``; ``0`` gives ``0s``.

    Negative durations get a leading ``-``. Fractions of a second are dropped.
    """
    seconds = int(seconds)
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    rest = abs(seconds)
    out = []
    for unit, size in _PARTS:
        count, rest = divmod(rest, size)
        if count:
            out.append(f"{count}{unit}")
    return sign + "".join(out)
