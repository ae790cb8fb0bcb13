"""Labels for page navigation."""

from pager.paginate import page_count


def page_label(page, total, per_page):
    return f"page {page} of {page_count(total, per_page)}"
