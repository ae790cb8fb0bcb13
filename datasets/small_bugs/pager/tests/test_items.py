from pager import page_count, page_items


def test_second_page():
    assert page_items(list(range(10)), 2, 3) == [3, 4, 5]


def test_exact_pages():
    assert page_count(9, 3) == 3
