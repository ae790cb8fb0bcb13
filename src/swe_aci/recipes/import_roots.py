"""The directories of a base tree that its install put on `sys.path`: where the working copy's
own files must come first for `import` to see the agent's edits.

An editable install points into the base tree, not into the sandbox's clone of it: a `.pth`
line names a directory (setuptools' `develop`, flit, hatchling), a `*.egg-link` names one, or
setuptools' PEP 660 finder maps each top-level module or package to its path. A project whose
code is not at the root (`src/`, `lib/`, any `package_dir`) is then imported from the cache
unless the same directories of the working copy come first. A non-editable install copies the
code into site-packages, so only the `src/` convention can say where the sources are.
"""

from __future__ import annotations

import ast
from pathlib import Path

MAX_FILE_BYTES = 1 << 20  # a .pth or finder file of the recipe's own install; bounded anyway


def import_roots(venv: Path, tree: Path) -> tuple[str, ...]:
    """The directories of `tree` (relative, POSIX, never the root itself) that the virtualenv's
    installs import from, in the order found, and `src` for a `src/` layout."""
    roots: list[str] = []
    for site in sorted(venv.glob("lib/python*/site-packages")):
        for path in sorted(site.iterdir()):
            for directory in _directories(path):
                relative = _inside(directory, tree)
                if relative and relative not in roots:
                    roots.append(relative)
    src_layout = (tree / "src").is_dir() and not (tree / "src" / "__init__.py").exists()
    if src_layout and "src" not in roots:
        roots.append("src")
    return tuple(roots)


def _directories(path: Path) -> list[Path]:
    """The directories one file of site-packages adds to or maps into the import path."""
    if path.suffix in (".pth", ".egg-link"):
        lines = _text(path).splitlines()
        if path.suffix == ".egg-link":
            lines = lines[:1]
        # site.py reads a relative line against the directory of the .pth file
        return [path.parent / line.strip() for line in lines if line.strip() and not _code(line)]
    if path.name.startswith("__editable__") and path.name.endswith("_finder.py"):
        # a mapped package directory or module file is imported from the directory holding it
        return [Path(each).parent for each in _mapping(_text(path))]
    return []


def _code(line: str) -> bool:
    """A .pth line that Python executes, or a comment: not a directory."""
    return line.startswith(("import ", "import\t", "#"))


def _mapping(source: str) -> list[str]:
    """The paths of the `MAPPING` dict literal of setuptools' editable finder."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a null byte
        return []
    for node in module.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return []
            if isinstance(value, dict):
                return [each for each in value.values() if isinstance(each, str)]
    return []


def _inside(directory: Path, tree: Path) -> str | None:
    try:
        relative = directory.resolve().relative_to(tree.resolve())
    except (OSError, ValueError):
        return None
    return relative.as_posix() if relative.parts else None


def _text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
