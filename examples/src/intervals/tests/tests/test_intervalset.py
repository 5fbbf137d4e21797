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


def test_touching_intervals_merge():
    s = IntervalSet([(1, 3), (3, 5)])
    assert list(s) == [(1, 5)]


def test_one_interval_bridges_many():
    s = IntervalSet([(1, 2), (4, 5), (7, 8), (20, 30)])
    s.add(0, 10)
    assert list(s) == [(0, 10), (20, 30)]
    assert len(s) == 20


def test_bridge_that_touches_both_neighbours():
    s = IntervalSet([(0, 3), (6, 9)])
    s.add(3, 6)
    assert list(s) == [(0, 9)]


def test_representation_is_canonical():
    assert IntervalSet([(1, 3), (3, 5)]) == IntervalSet([(1, 5)])


def test_remove_splits_an_interval():
    s = IntervalSet([(0, 10)])
    s.remove(3, 4)
    assert list(s) == [(0, 3), (4, 10)]
    assert 3 not in s
    assert len(s) == 9


def test_remove_trims_partial_overlaps():
    s = IntervalSet([(0, 5), (8, 12)])
    s.remove(3, 10)
    assert list(s) == [(0, 3), (10, 12)]


def test_remove_empty_range_is_a_no_op():
    s = IntervalSet([(0, 5)])
    s.remove(2, 2)
    assert list(s) == [(0, 5)]


def test_reversed_interval_message():
    with pytest.raises(ValueError) as caught:
        IntervalSet().add(5, 3)
    assert str(caught.value) == "reversed interval [5, 3)"


def test_reversed_remove_message():
    with pytest.raises(ValueError) as caught:
        IntervalSet([(0, 9)]).remove(7, 2)
    assert str(caught.value) == "reversed interval [7, 2)"
