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
        """Add every integer in ``[start, end)``.

        Intervals that overlap or touch the new one are merged with it.
        ``start == end`` adds nothing; ``start > end`` raises ``ValueError``.
        """
        _check(start, end)
        if start == end:
            return
        kept = []
        for s, e in self._items:
            if e < start or end < s:
                kept.append((s, e))
            else:
                start, end = min(s, start), max(e, end)
        kept.append((start, end))
        kept.sort()
        self._items = kept

    def remove(self, start, end):
        """Remove every integer in ``[start, end)``, splitting intervals as needed."""
        _check(start, end)
        if start == end:
            return
        kept = []
        for s, e in self._items:
            if e <= start or end <= s:
                kept.append((s, e))
                continue
            if s < start:
                kept.append((s, start))
            if end < e:
                kept.append((end, e))
        self._items = kept

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
        raise ValueError(f"reversed interval [{start}, {end})")
