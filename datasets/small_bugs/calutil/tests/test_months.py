from calutil import days_in_month, is_leap_year


def test_january():
    assert days_in_month(2023, 1) == 31


def test_february_of_a_leap_year():
    assert days_in_month(2024, 2) == 29


def test_1900_is_not_leap():
    assert not is_leap_year(1900)
