"""File contents as the viewer sees them, and the window arithmetic of the paper-era viewer.

The window state is its centre line `C`, as in the paper-era shell functions: `C` is constrained to
`[W//2, T - W//2]` (the lower bound wins for short files) and the visible lines are those that
`grep -n $ | head -n max(floor(C + W/2), W//2) | tail -n W` would print. The markers count the
lines before the first and after the last visible one.
"""

from __future__ import annotations

from dataclasses import dataclass

BINARY_NOTICE = "(This file is binary or not valid UTF-8 text, so its content is not shown.)"


@dataclass(frozen=True)
class FileText:
    """A file split into lines like awk's NR counts them (a last line without newline counts)."""

    path: str
    lines: tuple[str, ...]
    binary: bool = False
    binary_line_count: int = 0
    final_newline: bool = True  # False when the last line has no newline

    @property
    def crlf(self) -> bool:
        """Whether every line that ends with a newline ends with CR LF (and at least one does)."""
        ended = self.lines if self.final_newline else self.lines[:-1]
        return bool(ended) and all(line.endswith("\r") for line in ended)

    @property
    def total(self) -> int:
        return self.binary_line_count if self.binary else len(self.lines)

    @classmethod
    def decode(cls, path: str, data: bytes) -> FileText:
        """Split bytes into lines; text with a NUL byte or invalid UTF-8 is binary."""
        binary = b"\0" in data
        text = ""
        if not binary:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                binary = True
        if binary:
            count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            return cls(path, (), binary=True, binary_line_count=count)
        return cls(path, tuple(split_lines(text)), final_newline=not text or text.endswith("\n"))


def split_lines(text: str) -> list[str]:
    """Lines separated by "\\n" only (not str.splitlines: "\\r", form feeds... stay in the line)."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def join_lines(lines: list[str] | tuple[str, ...]) -> str:
    """Every line written ends with a newline."""
    return "".join(line + "\n" for line in lines)


def constrain(centre: int, total: int, window: int | None) -> int:
    if window is None:
        return centre
    half = window // 2
    return max(min(centre, total - half), half)


def visible_range(total: int, centre: int, window: int | None) -> tuple[int, int]:
    """First and last visible line (1-based, inclusive; last < first when nothing is shown).
    A window of None shows the whole file."""
    if window is None:
        return 1, total
    centre = constrain(centre, total, window)
    last = min(total, max((2 * centre + window) // 2, window // 2))
    first = max(1, last - window + 1)
    return first, last


def centre_for_line(line: int, window: int | None) -> int:
    """The centre that puts `line` on row floor(W/6) (row 16 of 100), as `open f N` / `goto N`."""
    if window is None:
        return line
    return max(line + window // 2 - window // 6, 1)


def render(text: FileText, centre: int, window: int | None) -> str:
    """The viewer layout: header, `(A more lines above)`, `n:line` rows, `(B more lines below)`."""
    if text.binary:
        return render_range(text, 1, 0)
    return render_range(text, *visible_range(text.total, centre, window))


def render_range(text: FileText, first: int, last: int) -> str:
    """The viewer layout showing lines first..last."""
    out = [f"[File: {text.path} ({text.total} lines total)]"]
    if text.binary:
        out.append(BINARY_NOTICE)
        return "\n".join(out)
    if first > 1:
        out.append(f"({first - 1} more lines above)")
    out.extend(f"{number}:{text.lines[number - 1]}" for number in range(first, last + 1))
    if last < text.total:
        out.append(f"({text.total - last} more lines below)")
    return "\n".join(out)
