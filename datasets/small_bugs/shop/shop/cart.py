"""Carts: items, quantities, totals."""

from shop.catalog import price_of


class Cart:
    def __init__(self):
        self.items = {}

    def add(self, item, quantity=1):
        self.items[item] = self.items.get(item, 0) + quantity

    def subtotal(self):
        return sum(price_of(item) * quantity for item, quantity in self.items.items())

    def total(self, discount=0.0):
        """The subtotal less a `discount` given as a fraction (0.1 is 10% off)."""
        return round(self.subtotal() * discount, 2)
