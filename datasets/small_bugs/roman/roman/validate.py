"""What can be written as a Roman numeral."""


def check_range(number):
    if not isinstance(number, int) or not 1 <= number <= 3999:
        raise ValueError(f"cannot write {number!r} as a Roman numeral")
