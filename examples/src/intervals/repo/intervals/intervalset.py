"""IntervalSet: a set of integers kept as half-open intervals ``[start, end)``."""


class IntervalSet:
    """A set of integers kept as a sorted list of disjoint intervals.

    Invariant: ``self._items`` is sorted by start, and no two intervals overlap
    or touch, so every set has exactly one representation.
    """

    def __init__(self, intervals=()):
        self._items = []
        for start, end in intervals:
            self.add(start, end)

    def add(self, start, end):
        """Add every integer in ``[start, end)``."""
        _check(start, end)
        if start == end:
            return
        for index, (s, e) in enumerate(self._items):
            if start < e and s < end:
                self._items[index] = (min(s, start), max(e, end))
                return
        self._items.append((start, end))
        self._items.sort()

    def remove(self, start, end):
        """Remove every integer in ``[start, end)``."""
        _check(start, end)
        self._items = [(s, e) for s, e in self._items if not (start <= s and e <= end)]

    def __contains__(self, value):
        return any(s <= value < e for s, e in self._items)

    def __iter__(self):
        return iter(list(self._items))

    def __len__(self):
        return sum(e - s for s, e in self._items)

    def __eq__(self, other):
        if not isinstance(other, IntervalSet):
            return NotImplemented
        return self._items == other._items

    def __repr__(self):
        inner = ", ".join(f"[{s}, {e})" for s, e in self._items)
        return f"IntervalSet({inner})"


def _check(start, end):
    if start > end:
        raise ValueError("bad interval")
