"""Typed values."""

TRUE = {"1", "yes", "true", "on"}
FALSE = {"0", "no", "false", "off"}


def as_bool(value):
    lowered = value.lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r}")
