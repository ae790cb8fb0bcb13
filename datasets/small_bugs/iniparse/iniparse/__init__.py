"""A minimal INI reader."""

from iniparse.reader import parse_ini
from iniparse.values import as_bool

__all__ = ["as_bool", "parse_ini"]
