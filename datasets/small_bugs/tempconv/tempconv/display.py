"""Showing temperatures to people."""

UNITS = {"C": "\u00b0C", "F": "\u00b0F"}


def format_temperature(value, unit="C", digits=1):
    """`value` rounded to `digits`, with its unit: `21.5\u00b0C`."""
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}")
    return f"{round(value, digits)}{UNITS[unit]}"
