"""Calendar helpers."""

from calutil.leap import days_in_year, is_leap_year
from calutil.months import days_in_month

__all__ = ["days_in_month", "days_in_year", "is_leap_year"]
