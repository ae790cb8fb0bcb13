"""The mending of a model-written reproduction test before it runs. A small model's test often
fails to collect or fails for its own reasons: it leaves out imports (`pytest.raises` without
`import pytest`), defines its own stand-in for the function under test (`def key(...)` above the
test, so the test checks the stand-in), or expects a warning with `pytest.raises`, which only
catches exceptions. Such a test never shows the bug; mended, it may. Host side this is `ast` and
text only: nothing of the test runs here."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from swe_aci.pipeline.imports import (
    bound_names,
    import_for,
    missing_imports,
    module_attributes,
    unbound_uses,
    with_import_lines,
)
from swe_aci.pipeline.skeleton import parse

WARNINGS_AS_ERRORS = re.compile(r"""(simplefilter|filterwarnings)\(\s*['"]error|-W\s*error""")


def top_level_names(text: str) -> list[str]:
    """The functions, classes and assigned names a module defines at its top level."""
    tree = parse(text)
    names = []
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.extend(target.id for target in targets if isinstance(target, ast.Name))
    return names


def mend_test(
    test: str,
    module: str,
    module_names: list[str],
    importable: dict[str, str],
    reported: list[tuple[str, str]],
    aliases: Mapping[str, str] | None = None,
) -> tuple[str, list[str]]:
    """The model-written test with its stand-ins for the code under test removed (a top-level
    function or class, not a test or a fixture, named as something the target `module` defines,
    `module_names`, or as something the test imports itself), its `pytest.raises` of a warning
    made `pytest.warns`, its assertions of what the issue reports as the bug removed
    (`reported`: `issue_prose.reported_outputs`), the names it imports from a standard module
    that lacks them removed (`from typing import ParsedOptions`), and the imports it leaves out
    added (a name so removed among them, where the repository defines it), the
    target module's names first, then the modules the repository imports under an alias the
    test reads (`aliases`: `np`); and what was mended, one line each."""
    tree = parse(test)
    if tree is None:
        return test, []
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    own = set(module_names)
    lines = test.splitlines(keepends=True)
    notes = []
    for node in reversed(tree.body):
        if stands_in(node, own | imported):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            del lines[start - 1 : node.end_lineno]
            notes.append(f"removed the test's own {node.name} (it stands in for the repository's)")
    notes.reverse()
    mended, warned = with_warns("".join(lines))
    notes.extend(
        f"pytest.raises({name}) made pytest.warns (raises catches exceptions, not warnings)"
        for name in warned
    )
    mended, dropped = without_reported_outputs(mended, reported)
    notes.extend(
        f"removed `{assertion}`: it asserts what the issue reports as the bug"
        for assertion in dropped
    )
    mended, unknown = without_unknown_names(mended)
    notes.extend(
        f"removed `{name}` from `from {source} import ...`: the module has no such name"
        for source, name in unknown
    )
    names = {**importable, **dict.fromkeys(module_names, module)}
    mended, respelled = with_names_cased(mended, names, aliases)
    notes.extend(
        f"`{old}` spelled `{new}`, as the repository (or Python) spells it"
        for old, new in respelled
    )
    statements = missing_imports(mended, names, aliases=aliases)
    notes.extend(f"added `{statement}`" for statement in statements)
    return with_import_lines(mended, statements), notes


def without_unknown_names(test: str) -> tuple[str, list[tuple[str, str]]]:
    """The test without the names it imports from a common standard module
    (`imports.COMMON_MODULES`) that has no such name: the import fails, and the test with it,
    before it shows anything. Each (module, name) removed."""
    tree = parse(test)
    if tree is None:
        return test, []
    lines = test.splitlines(keepends=True)
    removed = []
    statements = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    for node in sorted(statements, key=lambda node: node.lineno, reverse=True):
        exported = module_attributes(node.module or "") if node.level == 0 else frozenset()
        unknown = [a for a in node.names if exported and a.name != "*" and a.name not in exported]
        before = lines[node.lineno - 1].encode()[: node.col_offset]
        after = lines[(node.end_lineno or node.lineno) - 1].encode()[node.end_col_offset :]
        if not unknown or before.strip() or after.split(b"#")[0].strip():  # `x; from y import z`
            continue
        kept = [alias for alias in node.names if alias not in unknown]
        indent = " " * node.col_offset
        statement = f"from {node.module} import {', '.join(map(ast.unparse, kept))}"
        replacement = statement if kept else ("pass" if node.col_offset else "")
        lines[node.lineno - 1 : node.end_lineno] = [f"{indent}{replacement}\n"]
        removed = [(node.module or "", alias.name) for alias in unknown] + removed
    return "".join(lines), removed


def with_names_cased(
    test: str, importable: dict[str, str], aliases: Mapping[str, str] | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """The test with each name it reads, never binds and could not import, spelled as the one
    name of the repository (`importable`), of the test itself or a builtin that differs from it
    only in case (`HTML2text()` where the module defines `HTML2Text`); and the names respelled."""
    tree = parse(test)
    if tree is None:
        return test, []
    spellings: dict[str, set[str]] = {}
    for name in {*importable, *bound_names(tree)}:
        spellings.setdefault(name.lower(), set()).add(name)
    respelled = {
        name: spelling
        for name, attributes in unbound_uses(tree).items()
        if import_for(name, attributes, importable, aliases) is None
        and len(found := spellings.get(name.lower(), set())) == 1
        and (spelling := next(iter(found))) != name
    }
    lines = [line.encode() for line in test.splitlines(keepends=True)]
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in respelled]
    for node in sorted(uses, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        line = lines[node.lineno - 1]  # the offsets count UTF-8 bytes
        new = respelled[node.id].encode()
        lines[node.lineno - 1] = line[: node.col_offset] + new + line[node.end_col_offset :]
    return b"".join(lines).decode(), list(respelled.items())


def without_reported_outputs(test: str, reported: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The test without its assertions that a call gives what the issue reports it gives at the
    base (`assert not is_leap_year(2000)` where the issue says "`is_leap_year(2000)` returns
    False": the model echoed the bug), each kept where it is its function's only assertion;
    and the assertions removed."""
    tree = parse(test)
    if tree is None or not reported:
        return test, []
    wanted = []
    for call, value in reported:
        expression = parse(call)
        if expression is not None and isinstance(expression.body[0], ast.Expr):
            wanted.append((expression.body[0].value, ast.literal_eval(value)))
    lines = test.splitlines(keepends=True)
    removed: list[ast.Assert] = []
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        asserts = [node for node in function.body if isinstance(node, ast.Assert)]
        echoes = [node for node in asserts if asserts_reported(node.test, wanted)]
        if echoes and len(echoes) < len(asserts):
            removed += echoes
    for node in sorted(removed, key=lambda each: each.lineno, reverse=True):
        del lines[node.lineno - 1 : node.end_lineno]
    return "".join(lines), [ast.unparse(node) for node in sorted(removed, key=lambda n: n.lineno)]


def asserts_reported(test: ast.expr, reported: list[tuple[ast.expr, object]]) -> bool:
    """Whether `test` says a reported call gives its reported value (`== value`, `is value`,
    `not call` for a false value, `call` for a true one)."""
    for expected, shown in reported:
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            if isinstance(test.ops[0], ast.Eq | ast.Is):
                sides = (test.left, test.comparators[0])
                for one, other in (sides, sides[::-1]):
                    if same_call(one, expected) and constant_of(other) == (True, shown):
                        return True
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            if same_call(test.operand, expected) and not shown:
                return True
        elif same_call(test, expected) and shown is True:
            return True
    return False


def same_call(node: ast.expr, call: ast.expr) -> bool:
    """The same call, the function named by its last name (`leap.is_leap_year(2000)` too)."""
    if not isinstance(node, ast.Call) or not isinstance(call, ast.Call):
        return False
    names = [
        each.attr if isinstance(each, ast.Attribute) else getattr(each, "id", None)
        for each in (node.func, call.func)
    ]
    arguments = [[ast.dump(each) for each in (*one.args, *one.keywords)] for one in (node, call)]
    return names[0] is not None and names[0] == names[1] and arguments[0] == arguments[1]


def constant_of(node: ast.expr) -> tuple[bool, object]:
    """(True, the value) of a literal expression; (False, None) otherwise."""
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def with_warns(test: str) -> tuple[str, list[str]]:
    """The test with each `pytest.raises(SomeWarning)` made `pytest.warns(SomeWarning)`, unless
    it turns warnings into errors; and the warnings so expected."""
    tree = parse(test)
    if tree is None or WARNINGS_AS_ERRORS.search(test):
        return test, []
    lines = [line.encode() for line in test.splitlines(keepends=True)]
    warned = []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args]
    for call in sorted(calls, key=lambda node: (node.lineno, node.col_offset), reverse=True):
        func, category = call.func, ast.unparse(call.args[0])
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "raises"
            and isinstance(func.value, ast.Name)
            and func.value.id == "pytest"
            and category.rpartition(".")[2].endswith("Warning")
            and func.end_lineno is not None
            and func.end_col_offset is not None
        ):
            line = lines[func.end_lineno - 1]  # ast's columns count bytes
            end = func.end_col_offset
            lines[func.end_lineno - 1] = line[: end - len("raises")] + b"warns" + line[end:]
            warned.append(category)
    return b"".join(lines).decode(), warned[::-1]


def stands_in(node: ast.stmt, names: set[str]) -> bool:
    """A top-level definition named as the code under test, neither a test nor a fixture."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    fixture = any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
    return node.name in names and not node.name.lower().startswith("test") and not fixture
