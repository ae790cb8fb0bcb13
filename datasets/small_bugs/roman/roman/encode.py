"""Integers to Roman numerals."""

from roman.validate import check_range

SYMBOLS = [
    (1000, "M"),
    (500, "D"),
    (100, "C"),
    (50, "L"),
    (10, "X"),
    (5, "V"),
    (1, "I"),
]


def to_roman(number):
    """`number` (1-3999) as a Roman numeral, with the subtractive forms: 4 is IV, 90 is XC."""
    check_range(number)
    parts = []
    for value, symbol in SYMBOLS:
        count, number = divmod(number, value)
        parts.append(symbol * count)
    return "".join(parts)
