"""A Python file's functions and methods with their signatures and line spans, read with `ast`:
the compact skeleton the model localizes on, and the spans the repair rewrites."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

EXCEPTION_CLASS = re.compile(r"(Error|Exception|Warning|Exit|Interrupt)$")


@dataclass(frozen=True)
class Location:
    """One function or method of a file (or, `kind` says, a module-level assignment or a class's
    own statements: candidates.py): `start`..`end` are 1-based lines, decorators included."""

    path: str
    qualname: str
    signature: str
    start: int
    end: int
    indent: int
    source: str
    kind: str = "function"

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2]

    @property
    def label(self) -> str:
        return f"{self.path}::{self.qualname}"


def parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def exception_classes(classes: Iterable[ast.ClassDef]) -> set[str]:
    """The names of `classes` that are exceptions: named as one, or derived (by a base's plain
    name, through any of `classes`) from a class named as one (`BadTimeSignature(BadSignature)`,
    `BadSignature(BadData)`, `BadData(Exception)`)."""
    bases = {
        node.name: {base.id for base in node.bases if isinstance(base, ast.Name)}
        for node in classes
    }
    found = {name for name in bases if EXCEPTION_CLASS.search(name)}
    changed = True
    while changed:
        changed = False
        for name, own in bases.items():
            if name not in found and (own & found or any(map(EXCEPTION_CLASS.search, own))):
                found.add(name)
                changed = True
    return found


def locations(path: str, text: str) -> list[Location]:
    """Every function and method of `text` (nested functions belong to their parent), in order;
    not the `typing.overload` stubs."""
    tree = parse(text)
    if tree is None:
        return []
    lines = text.splitlines(keepends=True)
    found: list[Location] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not overload(node):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                end = node.end_lineno or node.lineno
                found.append(
                    Location(
                        path=path,
                        qualname=prefix + node.name,
                        signature=signature(node),
                        start=start,
                        end=end,
                        indent=node.col_offset,
                        source="".join(lines[start - 1 : end]),
                    )
                )

    visit(tree.body, "")
    return found


def overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `node` is a `typing.overload` stub: a signature for type checkers, never run
    (natsort's three `os_sorted` would take three targets for one function)."""
    return any(
        (isinstance(decorator, ast.Name) and decorator.id == "overload")
        or (isinstance(decorator, ast.Attribute) and decorator.attr == "overload")
        for decorator in node.decorator_list
    )


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{node.name}({ast.unparse(node.args)}){returns}"


CONTEXT_STATEMENT_LINES = 3  # a longer top-level statement is shown as its first line and `...`
CONTEXT_LINES = 250  # the most lines of top-level code a prompt shows of a file


def context_lines(text: str) -> str:
    """The file's top-level statements other than function and class bodies: imports, constants,
    class and function headers (what a rewritten function may refer to). The same for every
    target of the file, so that the prompts of two targets share it as a prefix. Bounded: a
    statement other than an import of more than CONTEXT_STATEMENT_LINES lines (a lookup table)
    is shown as its first line and `...`; past CONTEXT_LINES lines, assignments are shown as
    `name = ...`, and what is still over is left out, said on the last line (inflect's
    `__init__.py` holds 1,600 lines of tables: 10k tokens, minutes of prompt processing on a
    CPU, for every rewrite)."""
    tree = parse(text)
    if tree is None:
        return ""
    lines = text.splitlines()
    full = _context(tree, lines, short_assignments=False)
    if len(full) <= CONTEXT_LINES:
        return "\n".join(full)
    kept = _context(tree, lines, short_assignments=True)
    if len(kept) > CONTEXT_LINES:
        left_out = len(kept) - CONTEXT_LINES + 1
        kept = [*kept[: CONTEXT_LINES - 1], f"# ... {left_out} more lines of top-level code"]
    return "\n".join(kept)


def _context(tree: ast.Module, lines: list[str], short_assignments: bool) -> list[str]:
    kept: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            kept.append(f"def {signature(node)}: ...")
        elif isinstance(node, ast.ClassDef):
            kept.append(f"class {node.name}: ...")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring
        elif short_assignments and isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            kept.append(" = ".join(ast.unparse(target) for target in targets) + " = ...")
        else:
            statement = lines[node.lineno - 1 : node.end_lineno or node.lineno]
            folds = not isinstance(node, ast.Import | ast.ImportFrom)  # imports name what exists
            if folds and len(statement) > CONTEXT_STATEMENT_LINES:
                statement = [statement[0], " " * (node.col_offset + 4) + "..."]
            kept.extend(statement)
    return kept


def module_name(path: str) -> str:
    """The import path of a repository file: `src/pkg/mod.py` -> `pkg.mod`."""
    parts = path.removesuffix(".py").split("/")
    if parts and parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
