"""Repair by a windowed rewrite: for a target too long to rewrite whole, the model is shown a
window of it (the lines holding most of the issue's words, or the line where the reproduction
fails), without line numbers, and writes the window back corrected; the reply replaces the
window's lines, re-indented to where they stand. A small model copies shown code well and
copies search/replace blocks' old lines badly: in a run of the real bugs at 17fcb92, 55 of 80
block samples were dropped (24 held no block, having echoed the region, 20 searched lines the
file does not have) against 21 of 45 whole rewrites. The edit passes the same checks as a
block's (blocks.edit_problem)."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from swe_aci.aci.lint import Linter
from swe_aci.pipeline import structure
from swe_aci.pipeline.blocks import (
    Span,
    comment_lines,
    docstring_lines,
    edit_problem,
    region,
    strip_numbers,
)
from swe_aci.pipeline.repair import Dropped, Edit, code_blocks
from swe_aci.pipeline.skeleton import Location, parse

BARE_CLAUSE = re.compile(r"^\s*(else|finally|try)\s*:\s*(#.*)?$")
ELLIPSES = ("...", "# ...", "pass  # ...")  # the lines left out, as a reply marks them
FAILS_HERE = "  # <- the issue's test fails here"
Node = ast.stmt | ast.ExceptHandler  # what has a header or stands whole: statements, `except`
WINDOW_GROWTH = 2  # a window grown past this many times its size, to whole statements, is none


@dataclass(frozen=True)
class Window:
    """Lines `start`..`end` (1-based, inclusive) of the location's file, whose code shares
    `indent` columns of indentation there; `failing`: the line where the reproduction fails,
    if within."""

    location: Location
    start: int
    end: int
    indent: int
    failing: int | None

    def code(self, text: str) -> str:
        """The window as shown: under the function's `def` line (a function's window), at
        the target's indentation, `...` for the lines left out before and after it, the
        failing line marked. A small model rewrites what looks like a function; bare lines it
        took for the issue's example and rewrote that instead."""
        lines = text.splitlines()
        location = self.location
        header = sorted(header_lines(location))
        body = lines[self.start - 1 : self.end]
        if self.failing is not None:
            body[self.failing - self.start] += FAILS_HERE
        inner = " " * self.indent + "..."
        first_hidden = (header[-1] + 1) if header else location.start
        shown = [lines[number - 1] for number in header]
        shown += [inner] if self.start > first_hidden else []
        shown += body
        shown += [inner] if self.end < location.end else []
        return textwrap.dedent("\n".join(shown))


def window_of(
    issue: str, text: str, location: Location, size: int, failing: int | None
) -> Window | None:
    """The window of `location` (at most `size` lines of code, comments, docstrings and the
    `def` lines not counted) holding most of the issue's words and the failing line, grown to
    whole statements and to the end of the blocks it stops inside of, past the docstring,
    ending before a block header whose body it does not hold; None when nothing is left of
    it or it is more than WINDOW_GROWTH times `size` lines."""
    docstrings = docstring_lines(text)
    prose = docstrings | comment_lines(text) | header_lines(location)
    focus = failing if failing is not None and location.start <= failing <= location.end else None
    start, end = region(text, location.start, location.end, issue, size, prose, focus)
    tree = parse(text)
    nodes = [
        node
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.stmt | ast.ExceptHandler)
    ]  # the file parsed once for the three steps below
    start, end = whole_statements(nodes, (start, end))
    end = closed_end(nodes, (start, end), WINDOW_GROWTH * size)
    lines = text.splitlines()
    inside = [number for number in docstrings if start <= number < end]
    if inside:
        start = max(inside) + 1  # after the docstring (and the `def` line): the prompt names it
    while start < end and not lines[start - 1].strip():
        start += 1
    end = without_open_end(nodes, lines, (start, end))
    if end < start or end - start + 1 > WINDOW_GROWTH * size:
        return None  # only a header was left, or it grew too long
    indent = min(len(line) - len(line.lstrip()) for line in lines[start - 1 : end] if line.strip())
    return Window(location, start, end, indent, focus if focus and start <= focus <= end else None)


def header_lines(location: Location) -> frozenset[int]:
    """A function's decorators and `def` lines (the prompt gives its signature; a window
    shows its body), none of another target."""
    tree = parse(textwrap.dedent(location.source)) if location.kind == "function" else None
    node = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return frozenset()
    return frozenset(range(location.start, location.start - 1 + node.body[0].lineno))


def whole_statements(nodes: list[Node], span: Span) -> Span:
    """`span` grown until no simple statement, and no compound statement's header (`if a and
    (b or c):` over two lines), stands partly inside it."""
    heads = [statement_head(node) for node in nodes if isinstance(node, ast.stmt)]
    start, end = span
    grown = True
    while grown:
        grown = False
        for first, last in heads:
            partly = first <= end and last >= start and not (start <= first and last <= end)
            if partly:
                start, end, grown = min(start, first), max(end, last), True
    return start, end


def without_open_end(nodes: list[Node], lines: list[str], span: Span) -> int:
    """The end of `span` before its trailing blank and comment lines and before a block's
    header (all its lines: `if (a\n or b):`) whose body is past it: shown a header, the model
    writes a body for it."""
    headers: dict[int, int] = {}  # a header's last line -> its first
    for node in nodes:
        body = getattr(node, "body", None)
        if isinstance(body, list) and body:
            first, last = statement_head(node)
            if body[0].lineno > last:
                headers[last] = first
    start, end = span
    while end > start:
        line = lines[end - 1]
        if not line.strip() or line.lstrip().startswith("#") or BARE_CLAUSE.match(line):
            end -= 1
        elif end in headers:
            end = headers[end] - 1
        else:
            break
    return end


def closed_end(nodes: list[Node], span: Span, most: int) -> int:
    """The end of `span` moved to the end of each block it stops inside of, innermost first,
    while the span stays within `most` lines: a window ending mid-loop shows half of it."""
    start, end = span
    enclosing = sorted(
        (node.end_lineno or node.lineno)
        for node in nodes
        if isinstance(node, ast.stmt) and start <= node.lineno <= end < (node.end_lineno or 0)
    )
    for block_end in enclosing:
        if block_end - start + 1 > most:
            break
        end = block_end
    return end


def statement_head(node: Node) -> Span:
    """The lines of a simple statement, or of a compound statement's header (a one-line `if x:
    y` counts as simple)."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and body[0].lineno > node.lineno:
        return start, body[0].lineno - 1
    return start, node.end_lineno or node.lineno


def window_variables(issue: str, text: str, window: Window) -> dict[str, object]:
    location = window.location
    return {
        "problem_statement": issue,
        "path": location.path,
        "name": location.qualname,
        "signature": location.signature,
        "code": window.code(text),
    }


def window_edit(text: str, window: Window, reply: str, linter: Linter | None) -> Edit:
    """The checked edit the reply's corrected window makes to `text`; Dropped with the reason."""
    location, path = window.location, window.location.path
    lines = text.splitlines()
    written = without_echo(reply_lines(reply), lines[: window.start - 1], lines[window.end :])
    header = [lines[number - 1] for number in sorted(header_lines(location))]
    at = next(
        (
            index
            for index in range(len(written) - len(header) + 1)
            if header and all(map(same, written[index:], header))
        ),
        None,
    )
    if at is not None:  # the `def` line shown above the window, and what the reply put before it
        written = written[at + len(header) :]
    while written and written[0].strip() in ELLIPSES:
        written = written[1:]
    while written and written[-1].strip() in ELLIPSES:
        written = written[:-1]
    written = dedented(written)
    if not any(line.strip() for line in written):
        raise Dropped("the reply holds no code")
    new = [" " * window.indent + line if line.strip() else "" for line in written]
    kept = text.splitlines(keepends=True)
    candidate = "".join([*kept[: window.start - 1], *(f"{line}\n" for line in new)])
    candidate += "".join(kept[window.end :])
    problem = edit_problem(text, candidate, path, (window.start, window.end), len(new), linter)
    if problem is not None:
        raise Dropped(problem)
    if structure.canonical(candidate, path) == structure.canonical(text, path):
        raise Dropped("the window is unchanged (in its code)")
    canonical = f"{path}\n{structure.canonical(candidate, path)}"
    return Edit({path: candidate}, canonical, len(new), source="window")


def reply_lines(reply: str) -> list[str]:
    """The reply's code (its last fenced block, else the whole reply), any line numbers and
    the failing line's mark taken off, without leading and trailing blank lines."""
    code = strip_numbers(code_blocks(reply)[-1])
    lines = [line.replace(FAILS_HERE.strip(), "").rstrip() for line in code.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def dedented(lines: list[str]) -> list[str]:
    """`lines` without the indentation their code lines share (a comment less indented than
    the code, as a reply may end with one, is not counted)."""
    code = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    margin = min((len(line) - len(line.lstrip()) for line in code), default=0)
    return [line[min(margin, len(line) - len(line.lstrip())) :] for line in lines]


def same(line: str, other: str) -> bool:
    return line.strip() == other.strip()


def without_echo(written: list[str], before: list[str], after: list[str]) -> list[str]:
    """`written` without the lines it copies from just before the window and just after it:
    they stand there already."""
    lead = max(
        (k for k in range(1, min(len(written), len(before)) + 1)
         if all(map(same, written[:k], before[-k:]))),
        default=0,
    )  # fmt: skip
    trail = max(
        (k for k in range(1, min(len(written) - lead, len(after)) + 1)
         if all(map(same, written[len(written) - k :], after[:k]))),
        default=0,
    )  # fmt: skip
    return written[lead : len(written) - trail]
