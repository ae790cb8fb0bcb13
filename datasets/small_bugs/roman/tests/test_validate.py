import pytest
from roman import check_range, to_roman


def test_zero_is_refused():
    with pytest.raises(ValueError):
        check_range(0)


def test_simple_numbers():
    assert to_roman(3) == "III"
    assert to_roman(1666) == "MDCLXVI"
