"""Reading runs back: per-instance trajectory statistics, and comparisons of configs."""
