"""Shortening text for display."""


def shorten(text, width, placeholder="..."):
    """`text` cut to at most `width` characters, ending with `placeholder` when cut."""
    if len(text) <= width:
        return text
    return text[: width - len(placeholder)] + placeholder
