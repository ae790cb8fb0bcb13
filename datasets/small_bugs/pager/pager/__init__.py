"""Pagination helpers."""

from pager.paginate import page_count, page_items
from pager.render import page_label

__all__ = ["page_count", "page_items", "page_label"]
