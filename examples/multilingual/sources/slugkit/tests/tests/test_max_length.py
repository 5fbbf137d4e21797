import pytest

from slugkit import slugify


def test_cut_at_separator():
    assert slugify("The quick brown fox", max_length=12) == "the-quick"


def test_exact_fit_keeps_last_word():
    assert slugify("The quick brown fox", max_length=15) == "the-quick-brown"


def test_long_first_word_is_cut():
    assert slugify("Supercalifragilistic word", max_length=5) == "super"


def test_no_limit_unchanged():
    assert slugify("The quick brown fox") == "the-quick-brown-fox"


def test_non_positive_limit_rejected():
    with pytest.raises(ValueError):
        slugify("abc", max_length=0)
