"""A Python file's functions and methods with their signatures and line spans, read with `ast`:
the compact skeleton the model localizes on, and the spans the repair rewrites."""

from __future__ import annotations

import ast
from dataclasses import dataclass


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


def context_lines(text: str) -> str:
    """The file's top-level statements other than function and class bodies: imports, constants,
    class and function headers (what a rewritten function may refer to). The same for every
    target of the file, so that the prompts of two targets share it as a prefix."""
    tree = parse(text)
    if tree is None:
        return ""
    lines = text.splitlines()
    kept: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            kept.append(f"def {signature(node)}: ...")
        elif isinstance(node, ast.ClassDef):
            kept.append(f"class {node.name}: ...")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring
        else:
            kept.extend(lines[node.lineno - 1 : node.end_lineno or node.lineno])
    return "\n".join(kept)


def module_name(path: str) -> str:
    """The import path of a repository file: `src/pkg/mod.py` -> `pkg.mod`."""
    parts = path.removesuffix(".py").split("/")
    if parts and parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
