"""Sets of integers stored as sorted, disjoint half-open intervals."""

from .intervalset import IntervalSet

__all__ = ["IntervalSet"]
