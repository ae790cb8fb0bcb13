"""A file's text with ast positions made character offsets, and the change a template repair
makes there (fix_patterns.py, path_arguments.py, shown_bytes.py)."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from swe_aci.pipeline.skeleton import Location

# one string literal on one line (not a concatenation of several)
LITERAL = re.compile(
    r"(?P<prefix>[rRbBuU]{0,2})(?P<quote>['\"])(?P<body>(?:\\.|(?!(?P=quote))[^\\\n])*)(?P=quote)"
)


@dataclass(frozen=True)
class Change:
    start: int  # character offsets in the file's text
    end: int
    new: str
    pattern: str
    line: int
    context: str = ""  # what must stand around two changes for them to be made together


class Source:
    """A file's text with ast positions (1-based lines, UTF-8 byte columns) made offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        prefix = self.lines[line - 1].encode("utf-8")[:column].decode("utf-8", "replace")
        return self.starts[line - 1] + len(prefix)

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def statement_lines(self, node: ast.stmt) -> tuple[int, int]:
        """The offsets of the whole lines `node` stands on (it starts its first line)."""
        return self.starts[node.lineno - 1], self.starts[node.end_lineno or node.lineno]


def is_docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def within(node: ast.AST, location: Location) -> bool:
    line = getattr(node, "lineno", None)
    end = getattr(node, "end_lineno", None)
    return line is not None and end is not None and location.start <= line and end <= location.end


def function_at(
    tree: ast.Module, location: Location
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function or method the location is (it starts at its first decorator)."""
    functions = (
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    )
    return next(
        (
            node
            for node in functions
            if min([node.lineno, *(d.lineno for d in node.decorator_list)]) == location.start
        ),
        None,
    )


def docstring_ids(tree: ast.Module) -> set[int]:
    """The ids of the string constants standing alone as statements (docstrings)."""
    return {id(node.value) for node in ast.walk(tree) if is_docstring(node)}


def holds_multiline_string(node: ast.stmt) -> bool:
    return any(
        isinstance(inner, ast.Constant | ast.JoinedStr) and inner.lineno != inner.end_lineno
        for inner in ast.walk(node)
    )


def indented(code: str) -> str:
    """Whole lines of code one level deeper (blank lines left empty)."""
    return textwrap.indent(code, "    ", lambda line: bool(line.strip()))
