"""Regressions the issue itself explains: an existing test that pins a literal the candidate
replaces by the name the issue asks for.

packaging's emscripten issue says the code reads the sysconfig variable
`PYEMSCRIPTEN_ABI_VERSION` where the interpreter publishes `PYEMSCRIPTEN_PLATFORM_VERSION`;
the repository's `test_pyemscripten` mocks the old name, so the right fix breaks it (the upstream
fix changes that test too). Such a regression is the old behaviour the issue reports, pinned by a
test: it does not count against the candidate, and the step names it. It qualifies only when the
edit removes from a file a string literal that reads as a name and that the issue never writes
(an issue that mentions the old name may want it kept), while adding there a name the issue
writes in quotes or backticks; and the test quotes that old literal in its own source
(decorators included).
"""

from __future__ import annotations

import ast

from swe_aci.pipeline.fix_patterns import NAME_LITERAL, issue_names


def replaced_literals(
    originals: dict[str, str], texts: dict[str, str], problem: str
) -> tuple[str, ...]:
    """The name-like string literals the edit `texts` removes from their files while adding a
    name the issue quotes that the file lacked; none the issue itself mentions."""
    wanted = set(issue_names(problem))
    replaced: list[str] = []
    for path, text in texts.items():
        before, after = _literals(originals.get(path, "")), _literals(text)
        if not {literal for literal in after if literal not in before} & wanted:
            continue
        replaced += [
            literal
            for literal in sorted(before - after)
            if NAME_LITERAL.fullmatch(literal) and literal not in problem
        ]
    return tuple(dict.fromkeys(replaced))


def pinned_tests(
    tree: dict[str, str], regressed: set[str], literals: tuple[str, ...]
) -> dict[str, str]:
    """The regressed test ids (`tests/test_tags.py::TestX::test_y[p]`) whose own source quotes
    one of `literals`: test id -> that literal."""
    if not literals:
        return {}
    pinned: dict[str, str] = {}
    for test in sorted(regressed):
        source = _test_source(tree, test)
        for literal in literals:
            if source and (f'"{literal}"' in source or f"'{literal}'" in source):
                pinned[test] = literal
                break
    return pinned


def _literals(text: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _test_source(tree: dict[str, str], test: str) -> str | None:
    """The source of the test function `test` names, decorators included (None: not found)."""
    path, *names = test.split("::")
    text = tree.get(path)
    if text is None or not names:
        return None
    names[-1] = names[-1].split("[", 1)[0]
    try:
        scope: list[ast.stmt] = ast.parse(text).body
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines(keepends=True)
    for index, name in enumerate(names):
        found = next(
            (
                node
                for node in scope
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.name == name
            ),
            None,
        )
        if found is None:
            return None
        if index == len(names) - 1:
            start = min([found.lineno, *(each.lineno for each in found.decorator_list)])
            return "".join(lines[start - 1 : found.end_lineno])
        scope = found.body
    return None
