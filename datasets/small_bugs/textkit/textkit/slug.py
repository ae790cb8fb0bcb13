"""URL slugs."""

import re

NOT_ALLOWED = re.compile(r"[^a-z0-9]")


def slugify(text):
    """Lowercase `text` and turn everything but letters and digits into single dashes."""
    lowered = text.strip().lower()
    return NOT_ALLOWED.sub("-", lowered).strip("-")
