import pytest
from tempconv import celsius_to_fahrenheit, format_temperature


def test_format_rounds_and_adds_the_unit():
    assert format_temperature(21.46) == "21.5\u00b0C"


def test_format_refuses_unknown_units():
    with pytest.raises(ValueError):
        format_temperature(1, "K")


def test_celsius_to_fahrenheit():
    assert celsius_to_fahrenheit(100) == 212
