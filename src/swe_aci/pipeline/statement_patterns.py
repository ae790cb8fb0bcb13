"""The fix patterns of fix_patterns.py on one statement: a condition negated, strengthened,
guarded against an empty sequence (its own item read, or its branch's) or testing None rather
than truth, a null check, a range check, an empty value not yielded, an empty sequence not
unpacked."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from swe_aci.pipeline.source_edits import Change, Source, holds_multiline_string, indented

GUARD_NAMES = ("value", "item", "result", "found")


def statement_changes(
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
        yield from _emptiness_guards(node, source)
        yield from _index_guards(node, source)
        yield from _none_tests(node, source)
    if isinstance(node, ast.If):
        yield from _branch_emptiness_guards(node, source)
    if function is None or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    if not _is_compound(node):
        yield from _null_checks(node, source, function)
        yield from _range_checks(node, source)
        yield from _empty_values(node, source, function)
        yield from _unpack_guards(node, source, function)


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


def _emptiness_guards(node: ast.If | ast.While, source: Source) -> Iterator[Change]:
    """`x and` before the operand of a condition that reads an item of a name `x` at a fixed
    index (`result[-1]`, `parts[0]`): an empty `x` raises IndexError there (emoji's
    `elif char == _ZWJ and result[-1].chars in EMOJI_DATA` on a leading joiner). Not where the
    condition reads `x` otherwise too (`x and x[0]`, `len(x) > 1 and x[1]`: it tests it)."""
    test = node.test
    operands = _operands(test)
    subscripted = {id(inner.value) for inner in ast.walk(test) if isinstance(inner, ast.Subscript)}
    tested = {
        inner.id
        for inner in ast.walk(test)
        if isinstance(inner, ast.Name) and id(inner) not in subscripted
    }
    for operand in operands:
        for inner in ast.walk(operand):
            if (
                isinstance(inner, ast.Subscript)
                and isinstance(inner.value, ast.Name)
                and _fixed_index(inner.slice)
                and inner.value.id not in tested
            ):
                start, _ = source.span(operand)
                tested.add(inner.value.id)
                yield Change(start, start, f"{inner.value.id} and ", "emptiness guard", node.lineno)
                break


def _operands(test: ast.expr) -> list[ast.expr]:
    """The operands of a condition a guard may go before: those of an `and`/`or`, or the
    condition itself; none of a conditional expression or an assignment expression, which a
    guard before them would bind otherwise."""
    if isinstance(test, ast.BoolOp):
        return test.values
    if isinstance(test, ast.Compare | ast.Call | ast.Subscript | ast.Attribute | ast.UnaryOp):
        return [test]
    return []


def _index_guards(node: ast.If | ast.While, source: Source) -> Iterator[Change]:
    """`len(x) > i + 1 and` before the operand of a condition that reads `x[i + 1]`, an item
    of a name at a computed index (a name, or a name plus or minus a small integer): past the
    end, `x` raises IndexError there (toml's `item == '\\r' and sl[i + 1] == '\\n'` on a
    document ending in a carriage return). Not where the condition reads `len(x)` already."""
    test = node.test
    operands = _operands(test)
    measured = {
        inner.args[0].id
        for inner in ast.walk(test)
        if isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id == "len"
        and inner.args
        and isinstance(inner.args[0], ast.Name)
    }
    for operand in operands:
        for inner in ast.walk(operand):
            if (
                isinstance(inner, ast.Subscript)
                and isinstance(inner.value, ast.Name)
                and inner.value.id not in measured
                and _computed_index(inner.slice)
            ):
                start, _ = source.span(operand)
                name, index = inner.value.id, source.segment(inner.slice)
                measured.add(name)
                yield Change(
                    start, start, f"len({name}) > {index} and ", "index guard", node.lineno
                )
                break


def _computed_index(index: ast.expr) -> bool:
    """A name, or a name plus or minus a small integer: `i`, `i + 1`, `pos - 1`."""
    if isinstance(index, ast.BinOp) and isinstance(index.op, ast.Add | ast.Sub):
        return isinstance(index.left, ast.Name) and _fixed_index(index.right)
    return isinstance(index, ast.Name)


def _branch_emptiness_guards(node: ast.If, source: Source) -> Iterator[Change]:
    """`and x` after the condition of a branch that pops from a name `x` or reads an item of it
    at a fixed index (`if subject_type == "instance": subject_args.pop(0)`): an empty `x`
    raises IndexError there (typeguard's protocol check of a method with no positional
    parameter). Not where the condition reads `x` already."""
    tested = {inner.id for inner in ast.walk(node.test) if isinstance(inner, ast.Name)}
    start, end = source.span(node.test)
    test = source.segment(node.test)
    binds_tighter = isinstance(
        node.test, ast.Compare | ast.Call | ast.Name | ast.Attribute | ast.Subscript | ast.UnaryOp
    ) or (isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And))
    guarded = []
    for inner in (each for statement in node.body for each in ast.walk(statement)):
        name = _emptied(inner)
        if name is not None and name not in tested and name not in guarded:
            guarded.append(name)
            new = f"{test} and {name}" if binds_tighter else f"({test}) and {name}"
            yield Change(start, end, new, "emptiness guard", node.lineno)


def _emptied(node: ast.AST) -> str | None:
    """The name `x` of `x.pop(...)` or of `x[0]`, `x[-1]` (an item at a fixed index)."""
    if isinstance(node, ast.Subscript) and _fixed_index(node.slice):
        owner = node.value
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "pop"
    ):
        owner = node.func.value
    else:
        return None
    return owner.id if isinstance(owner, ast.Name) else None


def _none_tests(node: ast.If | ast.While, source: Source) -> Iterator[Change]:
    """A value's truth tested as a test of None: `if perfect:` -> `if perfect is not None:`,
    `not x` -> `x is None`, the condition's own operand or one of its `and`/`or` operands, a
    name or an attribute. 0, "" and an empty tuple are values too (hpack's `if perfect:`
    encoded a header whose value is empty as a literal)."""
    test = node.test
    operands = test.values if isinstance(test, ast.BoolOp) else [test]
    for operand in operands:
        negated = isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not)
        value = operand.operand if isinstance(operand, ast.UnaryOp) else operand
        if isinstance(value, ast.Name | ast.Attribute) and (negated or value is operand):
            start, end = source.span(operand)
            new = f"{source.segment(value)} is {'' if negated else 'not '}None"
            yield Change(start, end, new, "none test", node.lineno)


def _fixed_index(index: ast.expr) -> bool:
    """An integer literal, negative or not: `[0]`, `[-1]`."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and type(index.value) is int


def _unpack_guards(
    node: ast.stmt, source: Source, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[Change]:
    """`if not x: return None` before a statement unpacking the one item of a name `x`
    (`result, = stack`): an empty `x` raises "not enough values to unpack" there (lark's
    non-recursive transformer when the root's callback discards it). Not in a generator."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Tuple | ast.List)
        and len(node.targets[0].elts) == 1
        and not isinstance(node.targets[0].elts[0], ast.Starred)
        and isinstance(node.value, ast.Name)
    ):
        return
    if any(isinstance(inner, ast.Yield | ast.YieldFrom) for inner in ast.walk(function)):
        return
    start, _ = source.statement_lines(node)
    indent = " " * node.col_offset
    new = f"{indent}if not {node.value.id}:\n{indent}    return None\n"
    yield Change(start, start, new, "empty unpacked", node.lineno)


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [each.arg for each in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    return [name for name in names if name not in ("self", "cls")]


def _null_checks(
    node: ast.stmt, source: Source, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[Change]:
    """`if p is not None:` around a statement that reads an attribute or an item of parameter
    `p`."""
    if holds_multiline_string(node):
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
        new = f"{indent}if {name} is not None:\n{indented(source.text[start:end])}"
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
