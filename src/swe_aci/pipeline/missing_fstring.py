"""A fix pattern of the catalogue (fix_patterns.py) that the issue itself calls for: a string
meant as an f-string written without its `f`.

When the issue shows a placeholder such as `{field_name}` that a string literal of the target
holds as it is, and every name its placeholders read is a parameter or a local variable of the
function around it, the literal gets its `f` (ruff's RUF027 finds the same mistake statically;
marshmallow 3.21.0's `Field for "{field_name}" must be declared as a Field instance...`). The
literals of one implicit concatenation, or of one function, that need it are changed together
(`mutations.ALL_AT_ONCE`). A literal that `.format(...)` or `%` fills later is left alone.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator

from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.source_edits import Change, Source, function_at, is_docstring

PATTERN = "f-string prefix added"
PLACEHOLDER = re.compile(r"(?<!\{)\{([^{}]+)\}(?!\})")
STRING_PREFIX = re.compile(r"^([A-Za-z]*)['\"]")
FILLED_LATER = frozenset({".", "%"})  # `"...".format(...)`, `"..." % values`


def fstring_changes(
    tree: ast.Module, source: Source, location: Location, issue: str
) -> list[Change]:
    """An `f` before each string literal of the target whose placeholders the issue shows and
    whose names the enclosing function binds."""
    function = function_at(tree, location)
    if function is None or "{" not in issue:
        return []
    bound = _bound_names(function)
    skipped = _docstring_lines(tree)
    found = []
    for token, after in _string_tokens(source, location):
        prefix = STRING_PREFIX.match(token.string)
        if prefix is None or set(prefix.group(1).lower()) & {"f", "b"}:
            continue
        if token.start[0] in skipped or after in FILLED_LATER:
            continue
        places = PLACEHOLDER.findall(token.string)
        shown = any(f"{{{place}}}" in issue for place in places)
        if shown and all(_reads_only(place, bound) for place in places):
            start = source.starts[token.start[0] - 1] + token.start[1]
            end = start + len(token.string)
            found.append(Change(start, end, "f" + token.string, PATTERN, token.start[0]))
    return found


def _bound_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameters of `function` and the names its body assigns."""
    arguments = function.args
    names = {
        each.arg
        for each in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *filter(None, [arguments.vararg, arguments.kwarg]),
        ]
    }
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _docstring_lines(tree: ast.Module) -> set[int]:
    return {
        line
        for node in ast.walk(tree)
        if is_docstring(node)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)  # type: ignore[attr-defined]
    }


def _string_tokens(source: Source, location: Location) -> Iterator[tuple[tokenize.TokenInfo, str]]:
    """Each string token of the location's lines, with the first token after its implicit
    concatenation (comments and line breaks skipped)."""
    text = "".join(source.lines[location.start - 1 : location.end])
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return
    shift = location.start - 1
    ignored = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    for index, token in enumerate(tokens):
        if token.type != tokenize.STRING:
            continue
        after = next(
            (
                each.string
                for each in tokens[index + 1 :]
                if each.type not in ignored | {tokenize.STRING}
            ),
            "",
        )
        line, column = token.start
        yield token._replace(start=(line + shift, column)), after


def _reads_only(place: str, bound: set[str]) -> bool:
    """Whether the placeholder's expression (its `!r` and `:spec` left out) parses and reads
    only names of `bound`."""
    depth = 0
    end = len(place)
    for index, character in enumerate(place):
        depth += (character in "([") - (character in ")]")
        if depth == 0 and character in "!:":
            end = index
            break
    try:
        tree = ast.parse(place[:end].strip(), mode="eval")
    except SyntaxError:
        return False
    names = [node.id for node in ast.walk(tree) if isinstance(node, ast.Name)]
    return bool(names) and all(name in bound for name in names)
