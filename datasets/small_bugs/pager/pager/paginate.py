"""Splitting a list of items into pages."""


def page_count(total, per_page):
    """How many pages `total` items fill at `per_page` items a page."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return total // per_page


def page_items(items, page, per_page):
    """The items of page `page` (counted from 1)."""
    start = (page - 1) * per_page
    return items[start : start + per_page]
