from intervals import merge, total_length


def test_disjoint_intervals_stay_apart():
    assert merge([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_overlapping_intervals_merge():
    assert merge([(1, 4), (2, 6)]) == [(1, 6)]


def test_empty_input():
    assert merge([]) == []


def test_total_length_of_disjoint():
    assert total_length([(0, 2), (10, 13)]) == 5
