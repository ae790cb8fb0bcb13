"""Reproduction tests from the issue's own examples, without the model: `>>>` sessions (the shown
output is the wrong one; the expected value comes from the prose after it), "`call` returns X ...
expected Y" sentences, comparisons in backticks (`f(x) == 5`), `# expected:` comments in a code
block, tracebacks (the call must not raise, or must raise the exception the issue expects, or
raise the one shown with the message the prose expects instead of the shown one), a script's
line commented with a warning the issue wants gone (it must not warn), the issue's own pytest
functions, a shell line's `python -c` code under environment variables shown crashing (it
must run with them set), and a script's printed value with the one an earlier release printed
(it must print that).
Each is a pytest function (issue_sessions.py and issue_prose.py make them); the pipeline keeps
those that fail at the base. Also what the issue names (paths, traceback frames), which
localization puts first, and the imports a model-written test starts with."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from swe_aci.pipeline.imports import with_imports
from swe_aci.pipeline.issue_literals import PROMPT, indent, outside_code
from swe_aci.pipeline.issue_outputs import (
    earlier_release_tests,
    printed_output_tests,
    raised_instead_tests,
)
from swe_aci.pipeline.issue_prose import (
    commented_expectation_tests,
    comparison_tests,
    contrast_tests,
    expected_comment_tests,
    inline_tests,
    own_test_tests,
    unwanted_warning_tests,
)
from swe_aci.pipeline.issue_sessions import (
    BETTER_MESSAGE,
    paired_session_tests,
    session_tests,
    sessions,
)
from swe_aci.pipeline.issue_tracebacks import script_sessions, shell_line_tests
from swe_aci.pipeline.skeleton import exception_classes, module_name, parse
from swe_aci.retrieval.documents import is_test_path

IMPORT_LINE = re.compile(r"^(?:import [\w.]+|from [\w.]+ import \w)")
TRACEBACK_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')
PATH = re.compile(r"(?<![\w/.])((?:[\w-]+/)*[\w-]+\.py)\b")
CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z][A-Z0-9]{2,}$")


@dataclass(frozen=True)
class Mentions:
    """Paths and function names the issue gives (traceback frames first)."""

    paths: tuple[str, ...]
    names: tuple[str, ...]


def issue_imports(issue: str) -> list[str]:
    """The import statements of the issue's code (`>>>` lines and code blocks), each once, in
    order: what a test of its example has to import, as the issue's reporter did."""
    found: list[str] = []
    for line in issue.splitlines():
        prompt = PROMPT.match(line)
        statement = (prompt.group(1) if prompt else line).strip()
        if not IMPORT_LINE.match(statement) or statement in found:
            continue
        try:
            ast.parse(statement)
        except SyntaxError:
            continue
        found.append(statement)
    return found


def reproduction_imports(issue: str, module: str, name: str) -> list[str]:
    """The imports a model-written test starts with: the issue's own, then, when none of them
    imports the package of `module`, that package (the issue writes `pkg.f(...)`) or the
    chosen function `name` from `module`."""
    own = issue_imports(issue)
    package = module.split(".")[0]
    if any(re.search(rf"\b{re.escape(package)}\b", line) for line in own):
        return own
    if re.search(rf"(?<![\w.]){re.escape(package)}\.\w", issue):
        return [*own, f"import {package}"]
    return [*own, f"from {module} import {name.split('.')[0]}"]


def issue_tests(
    issue: str,
    importable: dict[str, str],
    exceptions: frozenset[str] = frozenset(),
    aliases: Mapping[str, str] | None = None,
) -> str:
    """A pytest module of every test the issue's examples give ("" when none); `importable`
    and `exceptions` as `importable_names` and `exception_names` give them, `aliases` as
    `imports.import_aliases` does."""
    found = sessions(issue)
    better_message = BETTER_MESSAGE.search(outside_code(issue)) is not None
    bodies = [
        *(
            body
            for session in [*found, *script_sessions(issue)]
            for body in session_tests(session, exceptions, better_message)
        ),
        *paired_session_tests(found),
        *inline_tests(issue, importable),
        *contrast_tests(issue, importable),
        *comparison_tests(issue, importable),
        *expected_comment_tests(issue),
        *commented_expectation_tests(issue),
        *unwanted_warning_tests(issue),
        *own_test_tests(issue),
        *shell_line_tests(issue, exceptions),
        *printed_output_tests(issue),
        *earlier_release_tests(issue, importable, aliases),
        *raised_instead_tests(issue, exceptions),
    ]
    functions = []
    seen: set[str] = set()
    for body in bodies:
        code = "\n".join(body)
        if code in seen or parse(code) is None:
            continue
        code = with_imports(code, importable, frozenset({"pytest"}), aliases)
        seen.add(code)
        functions.append(f"def test_issue_example_{len(functions) + 1}():\n{indent(code)}\n")
    if not functions:
        return ""
    return "import pytest\n\n\n" + "\n\n".join(functions)


def mentions(issue: str) -> Mentions:
    """Paths (traceback frames first, then `.py` paths written in the text) and the functions
    of traceback frames, innermost first."""
    frames = TRACEBACK_FRAME.findall(issue)
    paths = [path for path, _ in reversed(frames)] + PATH.findall(issue)
    names = [name for _, name in reversed(frames) if name != "<module>"]
    return Mentions(tuple(dict.fromkeys(paths)), tuple(dict.fromkeys(names)))


def source_trees(tree: dict[str, str]) -> list[tuple[str, ast.Module]]:
    """The module name and the parsed text of each source file (not tests), by path."""
    found = []
    for path, text in sorted(tree.items()):
        if is_test_path(path) or not path.endswith(".py") or not (module := module_name(path)):
            continue
        parsed = parse(text)
        if parsed is not None:
            found.append((module, parsed))
    return found


def exception_names(modules: list[tuple[str, ast.Module]]) -> frozenset[str]:
    """The top-level exception classes of the source files (`source_trees`; `BadTimeSignature`,
    derived from `Exception` through two classes of another module): what the issue may expect
    raised."""
    classes = [
        node for _, parsed in modules for node in parsed.body if isinstance(node, ast.ClassDef)
    ]
    return frozenset(exception_classes(classes))


def importable_names(modules: list[tuple[str, ast.Module]]) -> dict[str, str]:
    """Each top-level function, class and constant (`REMOVE_EXTRA = 2`) name of the source
    files (`source_trees`) -> the module defining it (the first one): what a test built from
    the issue's sentences may import."""
    names: dict[str, str] = {}
    for module, parsed in modules:
        for node in parsed.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.setdefault(node.name, module)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and CONSTANT.match(target.id):
                        names.setdefault(target.id, module)
    return names
