import pytest

from units import celsius_to_fahrenheit, fahrenheit_to_celsius


def test_round_trip():
    assert fahrenheit_to_celsius(celsius_to_fahrenheit(37.0)) == pytest.approx(37.0)


def test_freezing_point():
    assert fahrenheit_to_celsius(32) == 0


def test_below_absolute_zero():
    with pytest.raises(ValueError):
        fahrenheit_to_celsius(-500)
