"""Measures of spread."""


def value_range(values):
    """Largest minus smallest value."""
    values = list(values)
    return max(values) - min(values)
