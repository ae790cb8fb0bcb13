from textkit import shorten, slugify


def test_short_text_is_kept():
    assert shorten("abc", 5) == "abc"


def test_long_text_is_cut_with_a_placeholder():
    assert shorten("abcdefghij", 6) == "abc..."


def test_simple_slug():
    assert slugify("Hello") == "hello"
