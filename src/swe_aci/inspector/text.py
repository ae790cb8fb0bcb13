"""Untrusted text made safe to show: what an agent, a model or a test run wrote reaches the page
only through these functions and Jinja's autoescape (never as markup).

Control characters (ANSI escapes, NUL...) are shown as `\\xNN`, lone surrogates as U+FFFD, and
very long text is cut with a note saying how much there was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Control characters other than newline and tab, and lone surrogates (JSON can carry them).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SURROGATE = re.compile(r"[\ud800-\udfff]")
PREVIEW_CHARS = 1200
PREVIEW_LINES = 20
MAX_SHOWN = 200_000  # thoughts, actions, patches and test logs beyond this are cut on the page


def visible(value: object, limit: int = MAX_SHOWN) -> str:
    """`value` as plain printable text, at most `limit` characters (plus a note when cut)."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    cut = len(text) - limit if limit and len(text) > limit else 0
    if cut:
        text = text[:limit]
    text = CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    text = SURROGATE.sub("\ufffd", text)
    if cut:
        text += f"\n[... {cut} more characters not shown]"
    return text


def preview(text: str) -> tuple[str, bool]:
    """The first lines of a long text and whether it was shortened."""
    lines = text.split("\n", PREVIEW_LINES)
    short = "\n".join(lines[:PREVIEW_LINES])
    if len(short) > PREVIEW_CHARS:
        short = short[:PREVIEW_CHARS]
    return visible(short), len(short) < len(text)


@dataclass
class DiffLine:
    kind: str  # file, hunk, add, del, context
    text: str


def diff_lines(patch: str) -> list[DiffLine]:
    """A unified diff split into lines classified for highlighting (CSS classes, no markup)."""
    lines = []
    for line in visible(patch).split("\n"):
        if line.startswith(("diff --git", "+++ ", "--- ", "index ", "new file", "deleted file")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "context"
        lines.append(DiffLine(kind, line))
    return lines
