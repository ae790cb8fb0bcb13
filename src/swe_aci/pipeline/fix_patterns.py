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
- an emptiness guard: a condition reading an item of `x` at a fixed index (`result[-1]`) gets
  `x and` before that operand, and that of a branch popping from `x` or reading such an item
  `and x` after it; an index guard: a condition reading `x[i + 1]` gets `len(x) > i + 1 and`
  before that operand; a statement unpacking the one item of `x` (`result, = stack`)
  gets `if not x: return None` before it;
- a test of None for a test of truth: `if perfect:` -> `if perfect is not None:`, `not x` ->
  `x is None`, `a if x else b` -> `a if x is not None else b`, `x or default` -> `(x if x is
  not None else default)` (0, "" and an empty tuple are values too);
- a range check: a bound clamped to the length the same statement reads
  (`n` -> `min(n, len(text))`);
- subclass-friendliness: a class of the module named inside a method replaced by `type(self)`
  (`cls` in a class method);
- regular expressions in string literals (those given to `re` whatever they hold): the anchors
  `^` and `$` made `\\A` and `\\Z` (`$` matches before a trailing newline), a quantifier `+`
  made `*` and back, a character class repeated (`[^a-z0-9]` -> `[^a-z0-9]+`); a match of a
  pattern's start made a match of the whole text (`_RE_INDEX.match(s)` -> `fullmatch`);
- an empty value not yielded (`yield list(it)` -> `if value: yield value`);
- an exception converted: where the reproduction fails on a built-in exception and expects the
  library's own (`pytest.raises(InvalidVersion)`), the target's body in `try:`, the one raised
  re-raised as the one expected;
- a name in a string literal replaced by the one the issue writes (a key, a variable, an
  attribute looked up by name): `"PYEMSCRIPTEN_ABI_VERSION"` -> `"PYEMSCRIPTEN_PLATFORM_VERSION"`
  where the issue quotes the latter, the file does not hold it, and both share a word and a case.
- (similar_names.py) the wrong variable: a read of a variable made another of the target named
  alike (`max_time` -> `max_time_value`, `item` -> `items`).
- (path_arguments.py) a path argument converted on entry, `p = os.fspath(p)`, where the issue
  speaks of `pathlib` paths.
- (missing_fstring.py) the `f` of an f-string written without it, where the issue shows one of
  its placeholders (`{field_name}`) as it is.
- (shown_bytes.py) a value formatted into a message decoded (and shown by repr), where the issue
  shows a bytes literal.

Not deleting a statement: of the patches that pass a test suite, deletions are the ones most
often wrong (Qi et al., "Kali", ISSTA 2015); here deleting semver's `raise TypeError(...)` passed
the issue's example with no regression, and the bug stayed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from swe_aci.pipeline.expression_patterns import expression_changes
from swe_aci.pipeline.similar_names import similar_name_changes
from swe_aci.pipeline.skeleton import Location, exception_classes
from swe_aci.pipeline.source_edits import (
    LITERAL,
    Change,
    Source,
    docstring_ids,
    function_at,
    holds_multiline_string,
    indented,
    is_docstring,
    within,
)
from swe_aci.pipeline.statement_patterns import statement_changes

# a name as a string: a key, an environment or configuration variable, an attribute
NAME_LITERAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*")
QUOTED_NAME = re.compile(r"[`'\"]([A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*)[`'\"]")
NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
MIN_NAME_CHARS = 4


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
    the literals renamed to a name the `issue` quotes (`issue_names`) that the file lacks,
    and the reads of a variable made another named alike (similar_names.py)."""
    source = Source(text)
    docstrings = docstring_ids(tree)
    found = list(_changes(tree, source, location, _plain_classes(tree), docstrings))
    found += similar_name_changes(tree, source, location)
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
    defined = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    return {node.name for node in defined} - exception_classes(defined)


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
    function = function_at(tree, location)
    if function is None:
        return
    body = [each for each in function.body if not is_docstring(each)]
    if not body or body[0].lineno == function.lineno or any(map(holds_multiline_string, body)):
        return
    start = source.starts[body[0].lineno - 1]
    end = source.starts[body[-1].end_lineno or body[-1].lineno]
    indent = " " * body[0].col_offset
    inner = indented(source.text[start:end])
    raised = ", ".join(conversion.raised)
    new = (
        f"{indent}try:\n{inner}{indent}except ({raised},) as error:\n"
        f"{indent}    raise {conversion.expected}(str(error)) from error\n"
    )
    yield Change(start, end, new, "exception converted", body[0].lineno)


def _changes(
    tree: ast.Module, source: Source, location: Location, classes: set[str], docstrings: set[int]
) -> Iterator[Change]:
    """Every template change inside the location's lines."""
    for function, node in _walk(tree):
        if not within(node, location) or id(node) in docstrings:
            continue
        yield from expression_changes(node, source, function, classes)
        if isinstance(node, ast.stmt):
            yield from statement_changes(node, source, function)


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
