"""Small text statistics helpers."""

from wordcount.counter import top_words, words

__all__ = ["top_words", "words"]
