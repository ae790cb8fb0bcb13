"""Measures of the center of a sample."""


def mean(values):
    values = list(values)
    if not values:
        raise ValueError("mean of an empty sample")
    return sum(values) / len(values)


def median(values):
    """The middle value of the sorted sample (the mean of the two middle ones for an even count)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of an empty sample")
    return ordered[len(ordered) // 2]
