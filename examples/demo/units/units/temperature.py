"""Temperature conversions."""

ABSOLUTE_ZERO_C = -273.15


def celsius_to_fahrenheit(celsius):
    """Convert degrees Celsius to degrees Fahrenheit."""
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"{celsius} is below absolute zero")
    return celsius * 9 / 5 + 32


def fahrenheit_to_celsius(fahrenheit):
    """Convert degrees Fahrenheit to degrees Celsius."""
    celsius = fahrenheit - 32 * 5 / 9
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"{fahrenheit} is below absolute zero")
    return celsius
