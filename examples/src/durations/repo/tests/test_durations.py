import pytest

from durations import DurationError, format_duration, parse_duration, sum_durations


@pytest.mark.parametrize(
    "text, seconds",
    [("1h30m", 5400), ("45s", 45), ("2d", 172800), ("1w", 604800), ("3m", 180), ("1H", 3600)],
)
def test_parse_simple(text, seconds):
    assert parse_duration(text) == seconds


def test_parse_milliseconds():
    assert parse_duration("250ms") == pytest.approx(0.25)


def test_parse_strips_outer_whitespace():
    assert parse_duration("  10s \n") == 10


def test_empty_is_an_error():
    with pytest.raises(DurationError, match="empty duration"):
        parse_duration("   ")


def test_unknown_unit():
    with pytest.raises(DurationError, match="unknown unit 'x'"):
        parse_duration("5x")


def test_sum_durations():
    assert sum_durations(["1h", "30m", "15s"]) == 5415


def test_error_is_a_value_error():
    assert issubclass(DurationError, ValueError)


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "0s"), (5400, "1h30m"), (59, "59s"), (90061, "1d1h1m1s"), (-90, "-1m30s"), (1209600, "2w")],
)
def test_format(seconds, text):
    assert format_duration(seconds) == text
