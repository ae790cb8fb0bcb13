"""A fix pattern of the catalogue (fix_patterns.py) that the issue itself calls for: path
arguments accepted as any `os.PathLike`.

When an issue says a function fails on a `pathlib.Path` (`PathLike`, `PosixPath`), the usual
fix converts the argument once, on entry, with `os.fspath` (PEP 519), where the function uses
it as a `str`: concatenated or `%`-formatted with a string, or given a method `str` has and
`PurePath` lacks (`directory.split(os.path.sep)`). Such an issue often names several functions
of the module ("AtomicSaver and iter_find_files fail when given a pathlib.Path"), so the
conversion is offered in the target and in each function of the same file that the issue names
(a class's `__init__` when it names the class), as one edit (mutations.py groups them).

Only where the module imports `os` itself: the edit adds no import.
"""

from __future__ import annotations

import ast
import pathlib
import re
from collections.abc import Iterator

from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.source_edits import Change, Source, is_docstring

PATTERN = "path-like argument"
PATH_WORDS = re.compile(r"\b(?:pathlib|PathLike|PosixPath|WindowsPath|PurePath)\b")
# what a str argument answers and a path does not
STR_ONLY = frozenset(name for name in dir(str) if not name.startswith("_")) - frozenset(
    dir(pathlib.PurePath)
)
Function = ast.FunctionDef | ast.AsyncFunctionDef


def path_changes(tree: ast.Module, source: Source, location: Location, issue: str) -> list[Change]:
    """`p = os.fspath(p)` first in the target's function and in the functions of its file the
    issue names, for each parameter `p` used as a str; none unless the issue speaks of paths
    and the module imports `os`."""
    if not PATH_WORDS.search(issue) or not _imports_os(tree):
        return []
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", issue))
    found: list[Change] = []
    for function, owner in _functions(tree):
        named = function.name in words or (
            owner is not None and function.name == "__init__" and owner in words
        )
        if named or (function.lineno >= location.start and function.end_lineno == location.end):
            found += _conversions(function, source)
    return found


def _imports_os(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Import) and any(alias.name == "os" and not alias.asname
                                             for alias in node.names)
        for node in tree.body
    )  # fmt: skip


def _functions(tree: ast.Module) -> Iterator[tuple[Function, str | None]]:
    """The module's functions and its classes' methods, each with its class's name."""
    for node in tree.body:
        if isinstance(node, Function):
            yield node, None
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, Function):
                    yield inner, node.name


def _conversions(function: Function, source: Source) -> Iterator[Change]:
    statements = function.body[1:] if is_docstring(function.body[0]) else function.body
    if not statements:
        return  # a docstring alone
    first = statements[0]
    start = source.statement_lines(first)[0]
    indent = " " * first.col_offset
    for name in _used_as_str(function):
        new = f"{indent}{name} = os.fspath({name})\n"
        yield Change(start, start, new, PATTERN, first.lineno)


def _used_as_str(function: Function) -> list[str]:
    """The parameters the function concatenates or formats with a string literal, or calls a
    str-only method of."""
    arguments = function.args
    parameters = {
        each.arg for each in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    } - {"self", "cls"}
    used: list[str] = []
    for node in ast.walk(function):
        names: list[ast.expr] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
            operands = _operands(node)
            if any(isinstance(each, ast.Constant | ast.JoinedStr) and not _is_number(each)
                   for each in operands):  # fmt: skip
                names += operands
        elif isinstance(node, ast.Attribute) and node.attr in STR_ONLY:
            names.append(node.value)
        for each in names:
            if isinstance(each, ast.Name) and each.id in parameters and each.id not in used:
                used.append(each.id)
    return used


def _operands(node: ast.expr) -> list[ast.expr]:
    """The operands of a chain of one operator (`a + b + ".part"`: a, b, ".part")."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return [*_operands(node.left), *_operands(node.right)]
    return [node]


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, str)
