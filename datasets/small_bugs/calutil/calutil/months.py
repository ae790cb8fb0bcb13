"""Month lengths."""

from calutil.leap import is_leap_year

LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def days_in_month(year, month):
    """Days of `month` (1-12) in `year`."""
    if month == 2 and is_leap_year(year):
        return 29
    return LENGTHS[month - 1]
