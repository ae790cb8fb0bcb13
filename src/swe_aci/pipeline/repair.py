"""Repair by rewrite: the model's reply is the whole corrected function; it replaces the
function's lines in the file, re-indented to where the function stands (blocks.py: edits of a
few lines). An edit that does not parse, renames the
function, changes nothing, or introduces lint errors (the ACI's guardrail) is dropped."""

from __future__ import annotations

import ast
import re
import textwrap
import typing
from dataclasses import dataclass

from swe_aci.aci.lint import Linter, LintError, introduced_errors
from swe_aci.pipeline.imports import with_import_lines
from swe_aci.pipeline.skeleton import Location, parse

UNDEFINED_NAME = re.compile(r"undefined name '(\w+)'")
FENCED = re.compile(r"```[\w+-]*[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Edit:
    """A repair that passed the checks: the new text of each file it changes, its canonical form
    (ASTs, so formatting and comments do not make two fixes differ), the number of lines it
    writes, where it came from (`rewrite`: a whole function; `block`: search/replace blocks;
    TEMPLATE: a mutation screened against the reproduction) and what happened to its blocks."""

    texts: dict[str, str]
    canonical: str
    changed_lines: int
    source: str = "rewrite"
    notes: tuple[str, ...] = ()


TEMPLATE = "template"  # the `source` of a template repair's edit (templates.py)


class Dropped(Exception):
    """The repair was not usable; the message says why (one line, recorded)."""


def code_blocks(reply: str) -> list[str]:
    """The fenced blocks of a reply (an unclosed last fence runs to the end); else the reply."""
    blocks = [block for block in FENCED.findall(reply) if block.strip()]
    return blocks or [reply]


def new_function(reply: str, name: str) -> str:
    """The source of the function called `name` in the reply, dedented: from the last block
    that defines it with a body (a model may echo the prompt's `def f(): ...` stubs first);
    Dropped if there is none."""
    for block in reversed(code_blocks(reply)):
        code = textwrap.dedent(block)
        tree = parse(code)
        if tree is None:
            continue
        lines = code.splitlines(keepends=True)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name == name
                and not is_stub(node)
            ):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return textwrap.dedent("".join(lines[start - 1 : node.end_lineno]))
    raise Dropped(f"the reply holds no parsable function named {name}")


def is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of only a docstring, `...` or `pass`."""
    return all(
        isinstance(statement, ast.Pass)
        or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
        for statement in node.body
    )


def apply_function(text: str, location: Location, function: str) -> tuple[str, int]:
    """`text` with the location's lines replaced by `function` at its indentation, and the
    number of replacement lines."""
    indented = textwrap.indent(function, " " * location.indent, lambda line: bool(line.strip()))
    if not indented.endswith("\n"):
        indented += "\n"
    lines = text.splitlines(keepends=True)
    new = [*lines[: location.start - 1], indented, *lines[location.end :]]
    return "".join(new), indented.count("\n")


def rewrite_tokens(function: str, limit: int) -> int:
    """The output tokens a whole rewrite of `function` may take: twice its own (about three
    characters a token) and a margin, at most `limit`. A reply longer than that repeats itself or
    rewrites the whole file; on a CPU it would hold the budget for minutes."""
    return min(limit, 2 * len(function) // 3 + 128)


FOLDED_DOCSTRING = '"""..."""'
FOLD_LINES = 3  # a docstring of fewer lines is shown as it is


def docstring_span(function: str) -> tuple[int, int] | None:
    """The lines (1-based, inclusive) of the docstring of `function` (a function's source, at
    any indentation) when it stands on lines of its own; None without one."""
    tree = parse(textwrap.dedent(function))
    node = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    first = node.body[0]
    if not (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and first.lineno > node.lineno
    ):
        return None
    return first.lineno, first.end_lineno or first.lineno


def folded_span(function: str) -> tuple[int, int] | None:
    """The lines of the docstring `fold_docstring` folds: one of FOLD_LINES or more."""
    span = docstring_span(function)
    return span if span is not None and span[1] - span[0] + 1 >= FOLD_LINES else None


def fold_docstring(function: str) -> str:
    """`function` with a docstring of FOLD_LINES or more lines shown as one `\"\"\"...\"\"\"`
    line: the model reads and copies back only the code (a 13-line docstring costs a rewrite
    about 115 tokens of output, 10 s on two CPU cores)."""
    span = folded_span(function)
    if span is None:
        return function
    lines = function.splitlines(keepends=True)
    first = lines[span[0] - 1]
    placeholder = first[: len(first) - len(first.lstrip())] + FOLDED_DOCSTRING + "\n"
    return "".join([*lines[: span[0] - 1], placeholder, *lines[span[1] :]])


def unfold_docstring(function: str, original: str) -> str:
    """The reply's `function` (dedented) with the original's folded docstring in place of the
    placeholder, of a docstring the model wrote instead (it never saw the original: a
    docstring-only edit is no fix), or where it wrote none."""
    span = folded_span(original)
    if span is None:
        return function
    tree = parse(function)
    node = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return function
    lines = function.splitlines(keepends=True)
    docstring = textwrap.indent(
        textwrap.dedent("".join(original.splitlines(keepends=True)[span[0] - 1 : span[1]])),
        " " * node.body[0].col_offset,
        lambda line: bool(line.strip()),
    )
    own = docstring_span(function)
    start, end = own if own is not None else (node.body[0].lineno, node.body[0].lineno - 1)
    return "".join([*lines[: start - 1], docstring, *lines[end:]])


def make_edit(text: str, location: Location, reply: str, linter: Linter | None) -> Edit:
    """The checked edit of `location` the reply proposes (its folded docstring put back);
    Dropped with the reason otherwise."""
    function = unfold_docstring(new_function(reply, location.name), location.source)
    canonical = ast.dump(ast.parse(function))
    if canonical == ast.dump(ast.parse(textwrap.dedent(location.source))):
        raise Dropped("the function is unchanged")
    new_text, count = apply_function(text, location, function)
    if parse(new_text) is None:
        raise Dropped("the file no longer parses")
    if linter is not None:
        before = linter.errors(text, location.path)
        new_errors = introduced_errors(
            before, linter.errors(new_text, location.path), location.start, location.end, count
        )
        missing = typing_names(new_errors)
        if missing and len(missing) == len(new_errors):
            names = sorted(set(missing))
            new_text = with_typing_import(new_text, names)  # both texts shift by one line
            new_errors = introduced_errors(
                linter.errors(with_typing_import(text, names), location.path),
                linter.errors(new_text, location.path),
                location.start + 1,
                location.end + 1,
                count,
            )
        if new_errors:
            raise Dropped(f"lint: {new_errors[0].describe()} (line {new_errors[0].line})")
    return Edit({location.path: new_text}, canonical, count)


def typing_names(errors: list[LintError]) -> list[str]:
    """The undefined names among `errors` that `typing` defines (`List`, `Optional`...): small
    models annotate with them without importing them."""
    names = []
    for error in errors:
        match = UNDEFINED_NAME.fullmatch(error.message)
        if error.code == "F821" and match and match.group(1) in typing.__all__:
            names.append(match.group(1))
    return names


def with_typing_import(text: str, names: list[str]) -> str:
    """`text` with `from typing import <names>` after its docstring and leading imports."""
    return with_import_lines(text, [f"from typing import {', '.join(names)}"])
