from shop import Cart, price_of


def test_price_of_bread():
    assert price_of("bread") == 2.0


def test_subtotal_counts_quantities():
    cart = Cart()
    cart.add("apple", 4)
    cart.add("bread")
    assert cart.subtotal() == 4.0
