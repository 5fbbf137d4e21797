import pytest

from intervals import IntervalSet


def test_empty_set():
    s = IntervalSet()
    assert list(s) == []
    assert len(s) == 0
    assert 0 not in s


def test_disjoint_intervals_are_sorted():
    s = IntervalSet([(10, 12), (1, 3)])
    assert list(s) == [(1, 3), (10, 12)]


def test_half_open_membership():
    s = IntervalSet([(1, 3)])
    assert 1 in s
    assert 2 in s
    assert 3 not in s
    assert 0 not in s


def test_len_counts_integers():
    assert len(IntervalSet([(1, 3), (5, 8)])) == 5


def test_overlapping_pair_merges():
    s = IntervalSet([(1, 5), (3, 8)])
    assert list(s) == [(1, 8)]


def test_empty_interval_is_ignored():
    s = IntervalSet([(4, 4)])
    assert list(s) == []


def test_remove_whole_interval():
    s = IntervalSet([(1, 3), (5, 8)])
    s.remove(5, 8)
    assert list(s) == [(1, 3)]


def test_reversed_interval_raises():
    with pytest.raises(ValueError):
        IntervalSet().add(5, 3)


def test_repr():
    assert repr(IntervalSet([(1, 3), (5, 8)])) == "IntervalSet([1, 3), [5, 8))"


def test_equality():
    assert IntervalSet([(1, 3)]) == IntervalSet([(1, 3)])
    assert IntervalSet([(1, 3)]) != IntervalSet([(1, 4)])
