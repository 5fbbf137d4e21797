from intervals import merge, total_length


def test_disjoint_intervals_stay_apart():
    assert merge([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_overlapping_intervals_merge():
    assert merge([(1, 4), (2, 6)]) == [(1, 6)]


def test_empty_input():
    assert merge([]) == []


def test_total_length_of_disjoint():
    assert total_length([(0, 2), (10, 13)]) == 5


def test_touching_intervals_merge():
    assert merge([(3, 5), (1, 3)]) == [(1, 5)]


def test_contained_interval_keeps_outer_end():
    assert merge([(1, 10), (2, 3)]) == [(1, 10)]


def test_total_length_counts_overlap_once():
    assert total_length([(1, 10), (2, 3), (10, 12)]) == 11
