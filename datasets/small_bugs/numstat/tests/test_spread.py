from numstat import mean, median, value_range


def test_range():
    assert value_range([3, 9, 1]) == 8


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_of_odd_count():
    assert median([5, 1, 3]) == 3
