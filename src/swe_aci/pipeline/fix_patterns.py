"""The catalogue of template repairs (mutations.py): every change a fix pattern makes inside a
target's lines, as text offsets into its file, found on the file's AST.

The catalogue is the fix patterns of template-based program repair (TBar, Liu et al. ISSTA 2019;
PraPR, Ghanbari et al. ISSTA 2019) written for Python:

- a comparison's operator moved to its neighbour (`<` and `<=`, `==` and `!=`, `is` and `is not`,
  `in` and `not in`);
- arithmetic: `+` and `-`, `/` and `//`, an off-by-one term dropped (`n - 1` -> `n`), a small
  integer moved by one;
- conditions: `and` and `or`, one operand of several dropped, a condition negated, or
  strengthened by a comparison its own branch makes (`if sign:` -> `if sign and result >= 0:`);
- a null check: a statement reading an attribute or item of a parameter guarded by
  `if <parameter> is not None:`;
- a range check: a bound clamped to the length the same statement reads
  (`n` -> `min(n, len(text))`);
- subclass-friendliness: a class of the module named inside a method replaced by `type(self)`
  (`cls` in a class method);
- regular expressions in string literals: the anchors `^` and `$` made `\\A` and `\\Z` (`$`
  matches before a trailing newline), a quantifier `+` made `*` and back, a character class
  repeated (`[^a-z0-9]` -> `[^a-z0-9]+`);
- an empty value not yielded (`yield list(it)` -> `if value: yield value`);
- an exception converted: where the reproduction fails on a built-in exception and expects the
  library's own (`pytest.raises(InvalidVersion)`), the target's body in `try:`, the one raised
  re-raised as the one expected;
- a name in a string literal replaced by the one the issue writes (a key, a variable, an
  attribute looked up by name): `"PYEMSCRIPTEN_ABI_VERSION"` -> `"PYEMSCRIPTEN_PLATFORM_VERSION"`
  where the issue quotes the latter, the file does not hold it, and both share a word and a case.
- (path_arguments.py) a path argument converted on entry, `p = os.fspath(p)`, where the issue
  speaks of `pathlib` paths.
- (shown_bytes.py) a value formatted into a message decoded (and shown by repr), where the issue
  shows a bytes literal.

Not deleting a statement: of the patches that pass a test suite, deletions are the ones most
often wrong (Qi et al., "Kali", ISSTA 2015); here deleting semver's `raise TypeError(...)` passed
the issue's example with no regression, and the bug stayed.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

from swe_aci.pipeline.skeleton import Location

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
EXCEPTION_CLASS = re.compile(r"(Error|Exception|Warning|Exit|Interrupt)$")
# one string literal on one line (not a concatenation of several)
LITERAL = re.compile(
    r"(?P<prefix>[rRbBuU]{0,2})(?P<quote>['\"])(?P<body>(?:\\.|(?!(?P=quote))[^\\\n])*)(?P=quote)"
)
GUARD_NAMES = ("value", "item", "result", "found")
# a name as a string: a key, an environment or configuration variable, an attribute
NAME_LITERAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*")
QUOTED_NAME = re.compile(r"[`'\"]([A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*)[`'\"]")
NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
MIN_NAME_CHARS = 4


@dataclass(frozen=True)
class Change:
    start: int  # character offsets in the file's text
    end: int
    new: str
    pattern: str
    line: int
    context: str = ""  # what must stand around two changes for them to be made together


class Source:
    """A file's text with ast positions (1-based lines, UTF-8 byte columns) made offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        prefix = self.lines[line - 1].encode("utf-8")[:column].decode("utf-8", "replace")
        return self.starts[line - 1] + len(prefix)

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def statement_lines(self, node: ast.stmt) -> tuple[int, int]:
        """The offsets of the whole lines `node` stands on (it starts its first line)."""
        return self.starts[node.lineno - 1], self.starts[node.end_lineno or node.lineno]


def issue_names(issue: str) -> tuple[str, ...]:
    """The names the issue writes in backticks or quotes (`PYEMSCRIPTEN_PLATFORM_VERSION`,
    `"dest_path"`), each once: what a string literal of the code may have to read instead."""
    found = (name for name in QUOTED_NAME.findall(issue) if len(name) >= MIN_NAME_CHARS)
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Conversion:
    """The built-in exceptions the reproduction fails on at the base (`raised`) and the one its
    test expects instead (`expected`): the issue asks for the library's own exception."""

    raised: tuple[str, ...]
    expected: str


def changes(
    tree: ast.Module,
    text: str,
    location: Location,
    conversion: Conversion | None,
    issue: str = "",
) -> list[Change]:
    """Every change of the catalogue inside the location's lines of the file `text` (parsed:
    `tree`), the exception conversion where `conversion` names an exception the module has,
    and the literals renamed to a name the `issue` quotes (`issue_names`) that the file
    lacks."""
    source = Source(text)
    docstrings = _docstrings(tree)
    found = list(_changes(tree, source, location, _plain_classes(tree), docstrings))
    if conversion is not None and conversion.expected in _module_names(tree):
        found += _converted(tree, source, location, conversion)
    missing = [name for name in issue_names(issue) if name not in text]
    if missing:
        found += _renamed_literals(tree, source, location, docstrings, missing)
    return found


def _renamed_literals(
    tree: ast.Module, source: Source, location: Location, docstrings: set[int], names: list[str]
) -> Iterator[Change]:
    """Each string literal of the location that reads as a name, made each of `names` that
    shares a word with it and is written in the same case (`PYEMSCRIPTEN_ABI_VERSION` and
    `PYEMSCRIPTEN_PLATFORM_VERSION`; not `Emscripten`)."""
    for node in ast.walk(tree):
        if (
            not isinstance(node, ast.Constant)
            or not isinstance(node.value, str)
            or id(node) in docstrings
            or not within(node, location)
            or not NAME_LITERAL.fullmatch(node.value)
        ):
            continue
        literal = LITERAL.fullmatch(source.segment(node))
        if literal is None or "f" in literal.group("prefix").lower():
            continue
        start = source.span(node)[0] + literal.start("body")
        end = start + len(literal.group("body"))
        for name in names:
            if _case(node.value) == _case(name) and _words(node.value) & _words(name):
                yield Change(start, end, name, "literal named by the issue", node.lineno)


def _words(name: str) -> set[str]:
    """The words of a name of three letters or more, lowercase: `PYEMSCRIPTEN_ABI_VERSION`,
    `pyemscriptenAbiVersion` -> pyemscripten, abi, version."""
    return {word.lower() for word in NAME_WORD.findall(name) if len(word) >= 3}


def _case(name: str) -> str:
    return "upper" if name.isupper() else "lower" if name.islower() else "mixed"


def _plain_classes(tree: ast.Module) -> set[str]:
    """The module's classes that are not exceptions: an exception class named in a method
    (`raise TooManyFields(...)`) means that class, never `type(self)`."""
    defined = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    exceptions: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, node in defined.items():
            bases = {base.id for base in node.bases if isinstance(base, ast.Name)}
            if name not in exceptions and (
                EXCEPTION_CLASS.search(name)
                or any(EXCEPTION_CLASS.search(base) for base in bases)
                or bases & exceptions
            ):
                exceptions.add(name)
                changed = True
    return set(defined) - exceptions


def _module_names(tree: ast.Module) -> set[str]:
    """The classes a module defines and the names it imports by name."""
    names = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _converted(
    tree: ast.Module, source: Source, location: Location, conversion: Conversion
) -> Iterator[Change]:
    """The target function's body (its docstring left out) in `try:`, the exceptions the
    reproduction raised re-raised as the one it expects (`except (TypeError,) as error: raise
    InvalidVersion(str(error)) from error`)."""
    function = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and min([node.lineno, *(d.lineno for d in node.decorator_list)]) == location.start
        ),
        None,
    )
    if function is None:
        return
    body = [each for each in function.body if not is_docstring(each)]
    if not body or body[0].lineno == function.lineno or any(map(_holds_multiline_string, body)):
        return
    start = source.starts[body[0].lineno - 1]
    end = source.starts[body[-1].end_lineno or body[-1].lineno]
    indent = " " * body[0].col_offset
    inner = _indented(source.text[start:end])
    raised = ", ".join(conversion.raised)
    new = (
        f"{indent}try:\n{inner}{indent}except ({raised},) as error:\n"
        f"{indent}    raise {conversion.expected}(str(error)) from error\n"
    )
    yield Change(start, end, new, "exception converted", body[0].lineno)


def is_docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def within(node: ast.AST, location: Location) -> bool:
    line = getattr(node, "lineno", None)
    end = getattr(node, "end_lineno", None)
    return line is not None and end is not None and location.start <= line and end <= location.end


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string constants standing alone as statements (docstrings)."""
    return {id(node.value) for node in ast.walk(tree) if is_docstring(node)}


def _changes(
    tree: ast.Module, source: Source, location: Location, classes: set[str], docstrings: set[int]
) -> Iterator[Change]:
    """Every template change inside the location's lines."""
    for function, node in _walk(tree):
        if not within(node, location) or id(node) in docstrings:
            continue
        yield from _expression_changes(node, source, function, classes)
        if isinstance(node, ast.stmt):
            yield from _statement_changes(node, source, function)


def _walk(
    tree: ast.Module,
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.AST]]:
    """Every node with the innermost function around it; not the decorators, the parameters and
    the return annotation of a function."""
    pending: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.AST]] = [(None, tree)]
    while pending:
        function, node = pending.pop()
        yield function, node
        inner = node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else function
        signature = [*getattr(node, "decorator_list", [])]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            signature += [node.args, node.returns]  # annotations and defaults run at definition
        children = [child for child in ast.iter_child_nodes(node) if child not in signature]
        pending.extend((inner, child) for child in reversed(children))


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


def _expression_changes(
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


def _regex(node: ast.Constant, source: Source, line: int) -> Iterator[Change]:
    """Anchors and quantifiers of a literal that reads as a regular expression (one string
    literal, not an f-string or a concatenation)."""
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
    if not REGEX_HINT.search(body):
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


def _statement_changes(
    node: ast.stmt, source: Source, function: ast.FunctionDef | ast.AsyncFunctionDef | None
) -> Iterator[Change]:
    line = node.lineno
    if isinstance(node, ast.If | ast.While):
        start, end = source.span(node.test)
        test = source.segment(node.test)
        negated = (
            source.segment(node.test.operand)
            if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
            else f"not ({test})"
        )
        yield Change(start, end, negated, "condition negated", line)
        if isinstance(node, ast.If):
            for condition in _branch_conditions(node)[:2]:
                extra = source.segment(condition)
                yield Change(start, end, f"{test} and {extra}", "condition strengthened", line)
    if function is None or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    if not _is_compound(node):
        yield from _null_checks(node, source, function)
        yield from _range_checks(node, source)
        yield from _empty_values(node, source, function)


COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar,
    ast.Match,
)  # fmt: skip


def _is_compound(node: ast.stmt) -> bool:
    return isinstance(node, COMPOUND)


def _branch_conditions(node: ast.If) -> list[ast.expr]:
    """The comparisons the `if`'s own branch makes (in conditional expressions, nested tests)."""
    found = []
    for statement in node.body:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.IfExp | ast.If | ast.While) and isinstance(
                inner.test, ast.Compare
            ):
                found.append(inner.test)
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [each.arg for each in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    return [name for name in names if name not in ("self", "cls")]


def _holds_multiline_string(node: ast.stmt) -> bool:
    return any(
        isinstance(inner, ast.Constant | ast.JoinedStr) and inner.lineno != inner.end_lineno
        for inner in ast.walk(node)
    )


def _indented(code: str) -> str:
    """Whole lines of code one level deeper (blank lines left empty)."""
    return textwrap.indent(code, "    ", lambda line: bool(line.strip()))


def _null_checks(
    node: ast.stmt, source: Source, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[Change]:
    """`if p is not None:` around a statement that reads an attribute or an item of parameter
    `p`."""
    if _holds_multiline_string(node):
        return  # indenting it would change the string
    parameters = set(_parameters(function))
    read = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute | ast.Subscript) and isinstance(inner.value, ast.Name):
            name = inner.value.id
            if name in parameters and name not in read:
                read.append(name)
    start, end = source.statement_lines(node)
    indent = " " * node.col_offset
    for name in read:
        new = f"{indent}if {name} is not None:\n{_indented(source.text[start:end])}"
        yield Change(start, end, new, "null check", node.lineno)


def _range_checks(node: ast.stmt, source: Source) -> Iterator[Change]:
    """A name the statement reads made `min(name, len(x))`, where the statement reads `len(x)`
    (not the name compared by `is`, not `x` itself)."""
    lengths = [
        inner
        for inner in ast.walk(node)
        if isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id == "len"
        and len(inner.args) == 1
    ]
    if not lengths:
        return
    length = lengths[0]
    excluded = {id(each) for each in ast.walk(length)}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Compare) and isinstance(inner.ops[0], ast.Is | ast.IsNot):
            excluded.add(id(inner.left))
        if isinstance(inner, ast.Call):
            excluded.add(id(inner.func))
        if isinstance(inner, ast.Attribute):
            excluded.add(id(inner.value))
    measured = source.segment(length.args[0])
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Name)
            and isinstance(inner.ctx, ast.Load)
            and id(inner) not in excluded
            and inner.id != measured
        ):
            start, end = source.span(inner)
            new = f"min({inner.id}, {source.segment(length)})"
            yield Change(start, end, new, "range check", node.lineno)


def _empty_values(
    node: ast.stmt, source: Source, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[Change]:
    """`yield <value>` made `value = <value>; if value: yield value`."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield)):
        return
    value = node.value.value
    if value is None:
        return
    start, end = source.statement_lines(node)
    indent = " " * node.col_offset
    if isinstance(value, ast.Name):
        new = f"{indent}if {value.id}:\n{indent}    yield {value.id}\n"
    else:
        used = {inner.id for inner in ast.walk(function) if isinstance(inner, ast.Name)}
        name = next((each for each in GUARD_NAMES if each not in used), None)
        if name is None:
            return
        new = (
            f"{indent}{name} = {source.segment(value)}\n"
            f"{indent}if {name}:\n{indent}    yield {name}\n"
        )
    yield Change(start, end, new, "empty value", node.lineno)
