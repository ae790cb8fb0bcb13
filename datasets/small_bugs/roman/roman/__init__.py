"""Roman numerals."""

from roman.encode import to_roman
from roman.validate import check_range

__all__ = ["check_range", "to_roman"]
