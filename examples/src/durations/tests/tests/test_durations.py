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


def test_parse_decimal_hours():
    assert parse_duration("1.5h") == 5400


def test_parse_decimal_seconds():
    assert parse_duration("2.5s") == pytest.approx(2.5)


def test_parse_spaces_between_components():
    assert parse_duration("1h 30m  15s") == 5415


def test_parse_negative_negates_the_whole_duration():
    assert parse_duration("-1h30m") == -5400


def test_parse_format_round_trip_negative():
    assert parse_duration(format_duration(-5415)) == -5415


@pytest.mark.parametrize("text", ["1h foo", "h", "1h-2m", "1.h", "--5s"])
def test_garbage_is_rejected_with_the_input_quoted(text):
    with pytest.raises(DurationError) as caught:
        parse_duration(text)
    assert str(caught.value) == f"invalid duration: {text!r}"


def test_units_out_of_order():
    with pytest.raises(DurationError) as caught:
        parse_duration("30m1h")
    assert str(caught.value) == "unit 'h' out of order in '30m1h'"


def test_repeated_unit_is_out_of_order():
    with pytest.raises(DurationError) as caught:
        parse_duration("1h1h")
    assert str(caught.value) == "unit 'h' out of order in '1h1h'"
