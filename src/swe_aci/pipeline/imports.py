"""The imports a piece of code leaves out (a model-written test's `pytest.raises` without `import
pytest`, an issue's session without `from pkg import f`, a rewrite's `List` without `from typing
import List`) and where they go. Host side this is `ast` and text only: nothing of the code runs
here, and the only modules imported are the standard library's of COMMON_MODULES and
FROM_MODULES, fixed below."""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from swe_aci.pipeline.skeleton import parse

# standard modules a test uses as `module.attribute` (importing them has no side effect)
COMMON_MODULE_NAMES = """
abc argparse array ast base64 bisect calendar codecs collections contextlib copy csv dataclasses
datetime decimal difflib enum fnmatch fractions functools gc glob hashlib heapq html inspect io
ipaddress itertools json keyword locale logging math numbers operator os pathlib pickle platform
pprint random re shlex shutil statistics string struct subprocess sys tempfile textwrap threading
time token tokenize traceback types typing unicodedata uuid warnings weakref zoneinfo
"""
COMMON_MODULES = frozenset(COMMON_MODULE_NAMES.split())
# where a bare name comes from (`datetime(...)`, `Decimal(...)`, `Mock()`): the first of these
# modules that exports it
FROM_MODULES = (
    "collections",
    "typing",
    "datetime",
    "decimal",
    "fractions",
    "functools",
    "itertools",
    "pathlib",
    "io",
    "dataclasses",
    "enum",
    "unittest.mock",
    "textwrap",
    "copy",
    "contextlib",
    "operator",
)


# `import numpy as np`, `>>> import portion as P`: a line importing one module under an alias;
# `from freezegun import freeze_time`: one name from an absolute module
ALIAS_IMPORT = re.compile(
    r"^[ \t]*(?:>>>[ \t]*)?(import[ \t]+[A-Za-z_][\w.]*[ \t]+as[ \t]+([A-Za-z_]\w*)"
    r"|from[ \t]+[A-Za-z_][\w.]*[ \t]+import[ \t]+([A-Za-z_]\w*))[ \t]*(?:#.*)?$",
    re.MULTILINE,
)


def import_aliases(texts: Iterable[str]) -> dict[str, str]:
    """Each name the texts bind by an import of one module under an alias or of one name
    from a module -> the statement most of them bind it with. An issue's example or a
    model's test reads `P.closed(0, 5)`, `np.datetime64(...)` or `freeze_time(...)` and binds
    none; the repository's own tests say what they are (`import portion as P`, `import numpy
    as np`, `from freezegun import freeze_time`)."""
    found: dict[str, Counter[str]] = {}
    for text in texts:
        for statement, alias, name in ALIAS_IMPORT.findall(text):
            found.setdefault(alias or name, Counter())[" ".join(statement.split())] += 1
    return {bound: statements.most_common(1)[0][0] for bound, statements in found.items()}


@functools.cache
def exported_names() -> dict[str, str]:
    """Each public name of FROM_MODULES -> the first module exporting it."""
    names: dict[str, str] = {}
    for module_name in FROM_MODULES:
        module = importlib.import_module(module_name)
        public = getattr(module, "__all__", None) or [n for n in dir(module) if n[0] != "_"]
        for name in public:
            names.setdefault(name, module_name)
    return names


@functools.cache
def module_attributes(name: str) -> frozenset[str]:
    return frozenset(dir(importlib.import_module(name))) if name in COMMON_MODULES else frozenset()


def bound_names(tree: ast.Module) -> set[str]:
    """Every name the code binds anywhere (any scope: a name bound somewhere is left alone) and
    the builtins."""
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def unbound_uses(tree: ast.Module) -> dict[str, set[str]]:
    """Each name the code reads but never binds (in order of first use) -> the attributes read
    from it (`re.match` -> {"match"})."""
    bound = bound_names(tree)
    uses: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            uses.setdefault(node.id, set())
        value = node.value if isinstance(node, ast.Attribute) else None
        if isinstance(value, ast.Name) and value.id not in bound:
            uses.setdefault(value.id, set()).add(node.attr)
    return dict(sorted(uses.items(), key=lambda item: first_use(tree, item[0])))


def first_use(tree: ast.Module, name: str) -> tuple[int, int]:
    return min(
        (node.lineno, node.col_offset)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == name
    )


def import_for(
    name: str,
    attributes: set[str],
    importable: dict[str, str],
    aliases: Mapping[str, str] | None = None,
) -> str | None:
    """The import that binds `name` as the code uses it: pytest; a package of the repository
    read as one (`tomlkit.parse(...)`); a name the repository's modules define (`importable`:
    name -> module; `parse(...)` of `parse.py`'s own `parse`); an alias the repository imports
    a module under (`aliases`, as `import_aliases` gives them: `np`); a standard module when
    every attribute read from it exists; a name a common standard module exports; the import
    the repository binds the name with from a module (`freeze_time`: after the standard
    names, since a test's `from datetime import datetime` does not make every `datetime` the
    class). None: nothing known binds it (the code stays as it is)."""
    packages = {module.split(".")[0] for module in importable.values()}
    if name == "pytest" or (name in packages and (attributes or name not in importable)):
        return f"import {name}"
    if name in importable:
        return f"from {importable[name]} import {name}"
    bound = (aliases or {}).get(name)
    if bound and bound.startswith("import "):
        return bound
    if attributes and attributes <= module_attributes(name):
        return f"import {name}"
    if name in exported_names():
        return f"from {exported_names()[name]} import {name}"
    return bound


def missing_imports(
    code: str,
    importable: dict[str, str],
    provided: frozenset[str] = frozenset(),
    aliases: Mapping[str, str] | None = None,
) -> list[str]:
    """The import statements the code needs for the names it reads and never binds (or the
    module around it binds: `provided`)."""
    tree = parse(code)
    if tree is None:
        return []
    statements = (
        import_for(name, attributes, importable, aliases)
        for name, attributes in unbound_uses(tree).items()
        if name not in provided
    )
    return list(dict.fromkeys(statement for statement in statements if statement))


def with_import_lines(text: str, statements: Iterable[str]) -> str:
    """`text` with the statements after its docstring and leading imports."""
    statements = list(statements)
    if not statements:
        return text
    tree = parse(text)
    line = 0
    for node in tree.body if tree is not None else []:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not (docstring or isinstance(node, ast.Import | ast.ImportFrom)):
            break
        line = node.end_lineno or node.lineno
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines.insert(line, "".join(f"{statement}\n" for statement in statements))
    return "".join(lines)


def with_imports(
    code: str,
    importable: dict[str, str],
    provided: frozenset[str] = frozenset(),
    aliases: Mapping[str, str] | None = None,
) -> str:
    """`code` with the imports it leaves out (an issue's session often omits `from pkg import f`)."""
    return with_import_lines(code, missing_imports(code, importable, provided, aliases))
