"""The fix patterns of fix_patterns.py inside one expression: a comparison's or arithmetic's
operator swapped, an off-by-one term dropped, a small integer moved by one, `and`/`or` and
their operands, a class of the module made `type(self)`, a regular expression's anchors and
quantifiers."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from swe_aci.pipeline.source_edits import LITERAL, Change, Source

COMPARISON_SWAPS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Lt: (r"<", "<="),
    ast.LtE: (r"<=", "<"),
    ast.Gt: (r">", ">="),
    ast.GtE: (r">=", ">"),
    ast.Eq: (r"==", "!="),
    ast.NotEq: (r"!=", "=="),
    ast.Is: (r"\bis\b", "is not"),
    ast.IsNot: (r"\bis\s+not\b", "is"),
    ast.In: (r"\bin\b", "not in"),
    ast.NotIn: (r"\bnot\s+in\b", "in"),
}


ARITHMETIC_SWAPS: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: (r"\+", "-"),
    ast.Sub: (r"-", "+"),
    ast.Div: (r"/", "//"),
    ast.FloorDiv: (r"//", "/"),
}


SMALL_INTEGER = 16


REGEX_HINT = re.compile(r"\\[AZbdswDSW]|%s|\[|\(\?|\{\d")
# the words of a name that reads as a compiled regular expression: `_RE_ARRAY_INDEX`, `word_regex`
PATTERN_WORDS = frozenset({"re", "regex", "regexp", "rx", "pattern"})
NONE = "none test"


def _between(source: Source, left: ast.AST, right: ast.AST) -> tuple[int, int]:
    return source.span(left)[1], source.span(right)[0]


def _operator_change(
    source: Source, left: ast.AST, right: ast.AST, swap: tuple[str, str], pattern: str, line: int
) -> Change | None:
    """The operator between `left` and `right` (found by the regex `swap[0]`) made `swap[1]`."""
    start, end = _between(source, left, right)
    match = re.search(swap[0], source.text[start:end])
    if match is None:
        return None
    return Change(start + match.start(), start + match.end(), swap[1], pattern, line)


def expression_changes(
    node: ast.AST,
    source: Source,
    function: ast.FunctionDef | ast.AsyncFunctionDef | None,
    classes: set[str],
) -> Iterator[Change]:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        swap = COMPARISON_SWAPS.get(type(node.ops[0]))
        if swap is not None:
            right = node.comparators[0]
            change = _operator_change(source, node.left, right, swap, "comparison", line)
            if change is not None:
                yield change
    elif isinstance(node, ast.BinOp):
        yield from _arithmetic(node, source, line)
    elif isinstance(node, ast.BoolOp):
        yield from _boolean(node, source, line)
        yield from _default_for_none(node, source, line)
    elif isinstance(node, ast.IfExp):
        yield from _chosen_for_none(node, source, line)
    elif isinstance(node, ast.Call):
        yield from _regex_call(node, source, line)
    elif isinstance(node, ast.Constant):
        yield from _constant(node, source, line)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        owner = _owner_argument(function)
        if node.id in classes and owner is not None and not _is_super_argument(node, function):
            start, end = source.span(node)
            new = "type(self)" if owner == "self" else "cls"
            yield Change(start, end, new, "class of self", line)


def _arithmetic(node: ast.BinOp, source: Source, line: int) -> Iterator[Change]:
    swap = ARITHMETIC_SWAPS.get(type(node.op))
    if swap is not None:
        change = _operator_change(source, node.left, node.right, swap, "arithmetic", line)
        if change is not None:
            yield change
    if isinstance(node.op, ast.Add | ast.Sub):
        for kept, dropped in ((node.left, node.right), (node.right, node.left)):
            if _small_integer(dropped):
                start, end = source.span(node)
                yield Change(start, end, source.segment(kept), "off by one", line)


def _boolean(node: ast.BoolOp, source: Source, line: int) -> Iterator[Change]:
    word, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
    start, end = source.span(node)
    parts = [source.segment(value) for value in node.values]
    yield Change(
        start, end, f" {other} ".join(f"({part})" for part in parts), "boolean operator", line
    )
    if len(parts) > 1:
        for index in range(len(parts)):
            kept = [part for i, part in enumerate(parts) if i != index]
            new = f" {word} ".join(f"({part})" for part in kept) if len(kept) > 1 else kept[0]
            yield Change(start, end, f"({new})", "operand dropped", line)


def _default_for_none(node: ast.BoolOp, source: Source, line: int) -> Iterator[Change]:
    """`x or default` -> `(x if x is not None else default)`: 0, "" and an empty list given
    for `x` are values too, not a call for the default (pyotp's `initial_count or ...`)."""
    if isinstance(node.op, ast.Or) and len(node.values) == 2:
        value, default = node.values
        if isinstance(value, ast.Name | ast.Attribute):
            start, end = source.span(node)
            name, other = source.segment(value), source.segment(default)
            yield Change(start, end, f"({name} if {name} is not None else {other})", NONE, line)


def _chosen_for_none(node: ast.IfExp, source: Source, line: int) -> Iterator[Change]:
    """`a if x else b` -> `a if x is not None else b`, `a if not x else b` -> `a if x is None
    else b`, for a name or an attribute `x`."""
    test = node.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    value = test.operand if isinstance(test, ast.UnaryOp) else test
    if isinstance(value, ast.Name | ast.Attribute) and (negated or value is test):
        start, end = source.span(test)
        new = f"{source.segment(value)} is {'' if negated else 'not '}None"
        yield Change(start, end, new, NONE, line)


def _regex_call(node: ast.Call, source: Source, line: int) -> Iterator[Change]:
    """The pattern literal given to a function of `re` (`re.compile(r"^(.*)'s?$")`: a regular
    expression, whatever it holds), and a match of a pattern's start made a match of the
    whole text: `re.match(...)`, `_RE_INDEX.match(...)` -> `fullmatch` (json-pointer's
    `_RE_ARRAY_INDEX.match(str(part))` took `01` for an index)."""
    func = node.func
    if not isinstance(func, ast.Attribute):
        return
    owner = func.value
    module_call = isinstance(owner, ast.Name) and owner.id == "re"
    pattern = node.args[0] if module_call and node.args else None
    if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
        yield from _regex(pattern, source, line, always=True)
    named = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    words = {word.lower() for word in re.split(r"_|(?<=[a-z])(?=[A-Z])", named)}
    if func.attr == "match" and (module_call or words & PATTERN_WORDS):
        end = source.span(func)[1]
        yield Change(end - len("match"), end, "fullmatch", "regex anchor", line)


def _small_integer(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and 0 < node.value <= SMALL_INTEGER
    )


def _constant(node: ast.Constant, source: Source, line: int) -> Iterator[Change]:
    start, end = source.span(node)
    if type(node.value) is int and 0 <= node.value <= SMALL_INTEGER:
        for new in (node.value + 1, node.value - 1):
            if new >= 0:
                yield Change(start, end, str(new), "integer", line)
    elif isinstance(node.value, str):
        yield from _regex(node, source, line)


def _regex(node: ast.Constant, source: Source, line: int, always: bool = False) -> Iterator[Change]:
    """Anchors and quantifiers of a literal that reads as a regular expression (one string
    literal, not an f-string or a concatenation), or is one (`always`: given to `re`)."""
    literal = LITERAL.fullmatch(source.segment(node))
    if literal is None or "f" in literal.group("prefix").lower():
        return
    body = literal.group("body")
    start = source.span(node)[0] + literal.start("body")
    raw = "r" in literal.group("prefix").lower()
    escape = "\\" if raw else "\\\\"
    if body.startswith("^"):
        yield Change(start, start + 1, f"{escape}A", "regex anchor", line)
    if body.endswith("$") and not body.endswith("\\$"):
        end = start + len(body)
        yield Change(end - 1, end, f"{escape}Z", "regex anchor", line)
    if not (always or REGEX_HINT.search(body)):
        return
    for match in re.finditer(r"(?<!\\)[+*]", body):
        if match.start() == 0:
            continue
        new = "*" if match.group() == "+" else "+"
        around = body[max(0, match.start() - 2) : match.start()] + "|" + body[match.end() :][:1]
        at = start + match.start()
        yield Change(at, at + 1, new, "regex quantifier", line, around)
    for match in re.finditer(r"(?<!\\)\](?![+*?{])", body):  # a class repeated: `[^a-z]+`
        at = start + match.end()
        yield Change(at, at, "+", "regex quantifier", line, "]|")


def _owner_argument(function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> str | None:
    """`self` or `cls` when the function's first parameter is one of them."""
    if function is None or not function.args.args:
        return None
    first = function.args.args[0].arg
    return first if first in ("self", "cls") else None


def _is_super_argument(node: ast.Name, function: ast.AST | None) -> bool:
    """`C` of `super(C, self)`: the class itself is meant there."""
    return function is not None and any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "super"
        and any(argument is node for argument in call.args)
        for call in ast.walk(function)
    )
