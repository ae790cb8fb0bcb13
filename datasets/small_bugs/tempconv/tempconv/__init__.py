"""Temperature conversions and formatting."""

from tempconv.convert import celsius_to_fahrenheit, fahrenheit_to_celsius
from tempconv.display import format_temperature

__all__ = ["celsius_to_fahrenheit", "fahrenheit_to_celsius", "format_temperature"]
