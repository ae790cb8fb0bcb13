"""Leap years in the Gregorian calendar."""


def is_leap_year(year):
    """Whether `year` has a February 29th."""
    return year % 4 == 0 and year % 100 != 0


def days_in_year(year):
    return 366 if is_leap_year(year) else 365
