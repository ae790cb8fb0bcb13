"""The price list."""

PRICES = {"apple": 0.5, "bread": 2.0, "cheese": 7.5}


def price_of(item):
    """The unit price of `item`; KeyError for an unknown item."""
    return PRICES[item]
