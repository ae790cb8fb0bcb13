"""Small text utilities."""

from textkit.slug import slugify
from textkit.wrap import shorten

__all__ = ["shorten", "slugify"]
