"""What the issue's code uses that the repository defines only in its tests or documentation:
semver's issue takes "the subclass from the documentation" (`SemVerWithVPrefix`, defined in
`docs/advanced/semverwithvprefix.py`) and never writes it out. A reproduction test has to define
it to run; the model writing that test is shown the definition (with its file's imports) instead
of guessing it, or an import that does not exist."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TypeGuard

from swe_aci.pipeline.choose import DOCUMENTATION_DIRECTORIES
from swe_aci.pipeline.issue_literals import BACKTICKS, FENCE
from swe_aci.pipeline.skeleton import parse
from swe_aci.retrieval.bm25 import IDENTIFIER
from swe_aci.retrieval.documents import is_test_path

MAX_LINES = 40  # a longer definition costs the small model more prompt than it helps
MAX_DEFINITIONS = 2
DEFINES = re.compile(r"^\s*(?:class|def)\s+([A-Za-z_]\w*)", re.MULTILINE)


@dataclass(frozen=True)
class Definition:
    name: str
    path: str
    source: str  # the file's imports, then the definition


def code_names(issue: str) -> set[str]:
    """The identifiers of the issue's code blocks and backticked spans, but those its code
    defines itself (`class SemVerSubclass(Version): ...` in a session)."""
    code = "\n".join([*FENCE.findall(issue), *BACKTICKS.findall(FENCE.sub("", issue))])
    return set(IDENTIFIER.findall(code)) - set(DEFINES.findall(code))


def outside_source(path: str) -> bool:
    return is_test_path(path) or path.split("/")[0].lower() in DOCUMENTATION_DIRECTORIES


def top_level(text: str) -> list[ast.stmt]:
    tree = parse(text)
    return list(tree.body) if tree is not None else []


def wanted_definition(
    node: ast.stmt, wanted: set[str], issue: str
) -> TypeGuard[ast.ClassDef | ast.FunctionDef]:
    """A class the issue's code uses, or a function it calls (not a test, not a fixture)."""
    if isinstance(node, ast.ClassDef):
        return node.name in wanted
    if not isinstance(node, ast.FunctionDef) or node.name not in wanted:
        return False
    decorators = " ".join(ast.unparse(each) for each in node.decorator_list)
    called = re.search(rf"(?<![\w.]){re.escape(node.name)}\(", issue) is not None
    return called and not node.name.startswith("test") and "fixture" not in decorators


def outside_definitions(issue: str, tree: dict[str, str]) -> list[Definition]:
    """The classes and functions the issue's code uses that no source file defines at its top
    level but a test or documentation file does (the first such file by path), each with that
    file's imports; at most MAX_DEFINITIONS, none longer than MAX_LINES."""
    used = code_names(issue)
    defined_in_source = {
        node.name
        for path, text in tree.items()
        if path.endswith(".py") and not outside_source(path) and used & set(DEFINES.findall(text))
        for node in top_level(text)
        if isinstance(node, ast.ClassDef | ast.FunctionDef)
    }
    wanted = used - defined_in_source
    found: dict[str, Definition] = {}
    for path, text in sorted(tree.items()):
        if not (path.endswith(".py") and outside_source(path)) or not wanted & set(
            DEFINES.findall(text)
        ):
            continue
        body = top_level(text)
        lines = text.splitlines()
        imports = [
            ast.get_source_segment(text, node) or ""
            for node in body
            if isinstance(node, ast.Import | ast.ImportFrom)
        ]
        head = "\n".join(imports) + "\n\n\n" if imports else ""
        for node in body:
            if not wanted_definition(node, wanted, issue) or node.name in found:
                continue
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if (node.end_lineno or node.lineno) - start + 1 > MAX_LINES:
                continue
            own = "\n".join(lines[start - 1 : node.end_lineno])
            found[node.name] = Definition(node.name, path, f"{head}{own}\n")
    return list(found.values())[:MAX_DEFINITIONS]
