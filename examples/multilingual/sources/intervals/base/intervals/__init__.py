"""Closed integer intervals as (start, end) tuples."""
from .core import merge, total_length

__all__ = ["merge", "total_length"]
