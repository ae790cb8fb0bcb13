"""Word frequency helpers."""

import re
from collections import Counter

WORD = re.compile(r"[A-Za-z']+")


def words(text):
    """Split text into lowercase words."""
    return [word.lower() for word in WORD.findall(text)]


def top_words(text, n):
    """Return the n most common words with their counts, most common first.

    Ties are broken alphabetically.
    """
    counts = Counter(words(text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[: n - 1]
