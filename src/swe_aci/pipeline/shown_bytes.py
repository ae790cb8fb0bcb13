"""A fix pattern of the catalogue (fix_patterns.py) that the issue itself calls for: bytes shown
where text is meant.

When an issue shows a bytes literal (`b'2014-0423'`) in what a function prints or raises, the
value formatted there is bytes: Python 3 writes `str(b"x")` as `b'x'`. The fix decodes it, and,
where the message quoted it, keeps the quotes by formatting the decoded text's repr
(`'...: {}'.format(text)` -> `'...: {!r}'.format(text.decode())`: dateutil's parse_isodate). Both
are offered for each name or attribute a `str.format` call or an f-string formats in a `raise`
or `return` of the target.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.source_edits import Change, Source, within

PATTERN = "bytes shown as text"
BYTES_LITERAL = re.compile(r"""(?<![\w'"])b(['"])[^'"\n]+\1""")
PLACEHOLDER = re.compile(r"\{\}")


def bytes_changes(tree: ast.Module, source: Source, location: Location, issue: str) -> list[Change]:
    """The values formatted in the target's messages decoded (and shown by repr), when the issue
    shows a bytes literal."""
    if not BYTES_LITERAL.search(issue):
        return []
    found: list[Change] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise | ast.Return) or not within(node, location):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                found += _format_call(inner, source)
            elif isinstance(inner, ast.FormattedValue):
                found += _formatted_value(inner, source)
    return found


def _formatted(node: ast.expr) -> bool:
    return isinstance(node, ast.Name | ast.Attribute)


def _format_call(call: ast.Call, source: Source) -> Iterator[Change]:
    """`'...{}'.format(x)`: `x.decode()`, and with its `{}` made `{!r}` (positional `{}` only)."""
    function = call.func
    if not (
        isinstance(function, ast.Attribute)
        and function.attr == "format"
        and isinstance(function.value, ast.Constant)
        and isinstance(function.value.value, str)
        and not call.keywords
    ):
        return
    template = source.segment(function.value)
    places = list(PLACEHOLDER.finditer(template))
    for index, argument in enumerate(call.args):
        if not _formatted(argument):
            continue
        start, end = source.span(argument)
        decoded = f"{source.segment(argument)}.decode()"
        yield Change(start, end, decoded, PATTERN, call.lineno)
        if len(places) == len(call.args):
            place = places[index]
            quoted = template[: place.start()] + "{!r}" + template[place.end() :]
            arguments = [
                decoded if each is argument else source.segment(each) for each in call.args
            ]
            whole = f"{quoted}.format({', '.join(arguments)})"
            yield Change(*source.span(call), whole, PATTERN, call.lineno)


def _formatted_value(node: ast.FormattedValue, source: Source) -> Iterator[Change]:
    """`f'...{x}'`: `{x.decode()}`, and `{x.decode()!r}`."""
    if not _formatted(node.value) or node.conversion != -1 or node.format_spec is not None:
        return
    start, end = source.span(node.value)
    value = source.segment(node.value)
    yield Change(start, end, f"{value}.decode()", PATTERN, node.lineno)
    yield Change(start, end, f"{value}.decode()!r", PATTERN, node.lineno)
