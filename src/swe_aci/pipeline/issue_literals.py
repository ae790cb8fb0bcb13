"""The values an issue's prose states: literals (as canonical reprs), the ones it says are
expected, and the assertion a test makes of one; shared by the tests from `>>>` sessions
(issue_sessions.py) and from sentences and scripts (issue_prose.py)."""

from __future__ import annotations

import ast
import re
import textwrap
from typing import TypeGuard

PROMPT = re.compile(r"^\s*>>> ?(.*)$")
EXPECTATION = re.compile(
    r"(?i)\b(?:expected|expect|should\s+(?:be|return|give|equal|yield)|must\s+(?:be|return|give)"
    r"|instead\s+of|rather\s+than|they\s+should\s+be|(?:should|must)(?=\s+raise))\b:?"
)
BACKTICKS = re.compile(r"`([^`\n]+)`")
# `ValueError: <message>` up to the line's end, a dash between spaces or a semicolon (in
# `KeyError: 10 — wrong: should return None` the words after the dash are the reporter's)
EXCEPTION_MESSAGE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Warning): (?:(?! [\u2014\u2013-] )[^;\n])*"
)
OBJECT_REPR = re.compile(r"^<\w[^<>]*>$")  # `<Result ('a\n',) {}>`: what repr() of an object prints
CLAUSE_END = re.compile(r"[:;]\s")
REPR_PREFIX = "repr:"
PLAIN_LITERAL = re.compile(
    r"""^\s*(-?\d[\d_]*(?:\.\d+)?(?:e-?\d+)?|True|False|None|"[^"\n]*"|'[^'\n]*'|\[[^\]\n]*\]|\([^)\n]*\)|\{[^}\n]*\})"""
)
SENTENCE_END = re.compile(r"(?<!\d)\.(?:\s|$)|\n\s*\n")
CALL = re.compile(r"`([A-Za-z_][\w.]*\([^`\n]*\))`|(?<![\w.`])([A-Za-z_][\w.]*\([^()\n]*\))")
FENCE = re.compile(r"```[\w+-]*[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of `text`, dedented (a block inside a list item is indented)."""
    return [textwrap.dedent(block) for block in FENCE.findall(text)]


def statement_source(code: str, node: ast.stmt) -> str:
    """The source of a statement of `code`, dedented, its decorators included (ast's segment
    of a decorated function or class starts at its `def` or `class` line, and keeps the
    indentation of a nested statement's lines after the first)."""
    decorators = getattr(node, "decorator_list", None)
    if not decorators and node.col_offset == 0:
        return ast.get_source_segment(code, node) or ""
    start = min([node.lineno, *(decorator.lineno for decorator in decorators or [])])
    return textwrap.dedent("\n".join(code.splitlines()[start - 1 : node.end_lineno]))


def is_print(node: ast.AST) -> TypeGuard[ast.Call]:
    """Whether `node` is a call of `print`."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )


def has_prompt(block: str) -> bool:
    """Whether a code block holds a `>>>` line (a session, not a script or an output)."""
    return any(PROMPT.match(line) for line in block.splitlines())


def literal(text: str) -> str | None:
    """`text` when it is a Python literal (its canonical repr), else None."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return repr(value)


def expected_literals(prose: str) -> list[str]:
    """The literals stated as expected in `prose`, in order; not those of an exception's
    message quoted in it (`# ValueError: not enough values to unpack (expected 1, got 0)` is
    what the code printed, not what the reporter expects)."""
    values: list[str] = []
    prose = EXCEPTION_MESSAGE.sub("", prose)
    for match in EXPECTATION.finditer(prose):
        rest = prose[match.end() :]
        stop = SENTENCE_END.search(rest)
        sentence = first_clause(rest[: stop.start() if stop else len(rest)])
        spans = [value for span in BACKTICKS.findall(sentence) if (value := expected_value(span))]
        values.extend(spans or plain_literals(sentence))
    return values


def first_clause(sentence: str) -> str:
    """`sentence` up to the colon or semicolon after its first backticked span: in "Expected
    `X`: the whole string matches `{}`" the `{}` explains, it is not expected."""
    first = BACKTICKS.search(sentence)
    end = CLAUSE_END.search(sentence, first.end()) if first else None
    return sentence[: end.start()] if end else sentence


def expected_value(span: str) -> str | None:
    """A backticked expected value: a literal (its canonical repr), or an object's repr as
    printed (`<Result ('a',) {}>`, compared with repr() of the result; not one that shows an
    address, `<Foo object at 0x...>`, which no run repeats), else None."""
    if OBJECT_REPR.match(span.strip()) and " at 0x" not in span:
        return REPR_PREFIX + span.strip()
    return literal(span)


def plain_literals(text: str) -> list[str]:
    """The literals `text` starts with, separated by commas, `and`, `or` or `/`."""
    values = []
    while (found := PLAIN_LITERAL.match(text)) and (value := literal(found.group(1))):
        values.append(value)
        text = re.sub(r"^\s*(?:,|/|\band\b|\bor\b)?", "", text[found.end() :], count=1)
    return values


def before_next_call(prose: str) -> str:
    """The prose up to the first call it writes: literals after a call belong to that call."""
    first = CALL.search(prose)
    return prose[: first.start()] if first else prose


def check(expression: str, expected: str) -> str:
    if expected.startswith(REPR_PREFIX):
        return f"assert repr({expression}) == {expected.removeprefix(REPR_PREFIX)!r}"
    value = ast.literal_eval(expected)
    if isinstance(value, float):
        return f"assert ({expression}) == pytest.approx({expected})"
    return f"assert ({expression}) == {expected}"


def indent(source: str) -> str:
    return "\n".join("    " + line for line in source.splitlines())


def outside_code(issue: str) -> str:
    """The issue's prose: without its code blocks and `>>>` lines."""
    return FENCE.sub(
        "\n\n", "\n".join(line for line in issue.splitlines() if not PROMPT.match(line))
    )
