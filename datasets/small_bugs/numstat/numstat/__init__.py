"""Descriptive statistics."""

from numstat.center import mean, median
from numstat.spread import value_range

__all__ = ["mean", "median", "value_range"]
