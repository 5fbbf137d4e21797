"""Parse and format human-readable durations such as ``1h30m`` or ``250ms``."""

from .format import format_duration
from .parse import UNITS, DurationError, parse_duration, sum_durations

__all__ = ["UNITS", "DurationError", "format_duration", "parse_duration", "sum_durations"]
