from wordcount import top_words, words


def test_words_are_lowercased():
    assert words("The cat, the HAT") == ["the", "cat", "the", "hat"]


def test_top_words_returns_n_entries():
    text = "a b c a b a"
    assert top_words(text, 3) == [("a", 3), ("b", 2), ("c", 1)]


def test_top_words_breaks_ties_alphabetically():
    assert top_words("pear apple pear apple fig", 2) == [("apple", 2), ("pear", 2)]
