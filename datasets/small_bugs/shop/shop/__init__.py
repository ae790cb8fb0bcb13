"""A tiny shopping cart."""

from shop.cart import Cart
from shop.catalog import PRICES, price_of

__all__ = ["PRICES", "Cart", "price_of"]
