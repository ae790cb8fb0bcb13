"""Tests from the issue's sentences and scripts: "`call` returns X ... expected Y", a reported
output contrasted with the right one ("gives 3, but ... 2.5 here"), comparisons in backticks
(`f(x) == 5`), `# expected:` comments in a code block, a script's expression commented with what
it should give, a script's line commented with a warning the issue wants gone (it must not
warn), and the issue's own pytest functions."""

from __future__ import annotations

import ast
import builtins
import io
import re
import textwrap
import tokenize

from swe_aci.pipeline.issue_literals import (
    BACKTICKS,
    CALL,
    PLAIN_LITERAL,
    SENTENCE_END,
    check,
    code_blocks,
    expected_literals,
    expected_value,
    has_prompt,
    is_print,
    literal,
    outside_code,
    statement_source,
)
from swe_aci.pipeline.skeleton import parse

REPORTED = re.compile(
    r"`([A-Za-z_][\w.]*\([^`\n]*\))`\s+(?:returns|gives|says|is|prints|yields|outputs)\s+"
)
BUILTIN_WARNINGS = {name for name in dir(builtins) if name.endswith("Warning")}
UNWANTED_WARNING = re.compile(
    r"(?i)\bno\s+(?:\w+\s+)?warnings?\b|\b(?:should|must)\s+not\s+(?:warn|emit)"
    r"|\bwithout\s+(?:a\s+|any\s+)?(?:\w+\s+)?warnings?\b"
)
CONTRAST = re.compile(r"^\s*,?\s*but\b")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w]|\.\d)")
WARNING_COMMENT = re.compile(r"\s#.*?\b([A-Z]\w*Warning)\b")
WARNING_FILTER = re.compile(r"^warnings\.(?:simplefilter|filterwarnings|resetwarnings)\(")


def comparison_tests(issue: str, importable: dict[str, str]) -> list[list[str]]:
    """Tests from comparisons the prose writes in backticks, `f(x) == 5`: a call of the
    repository's code on the left, a literal on the right."""
    bodies = []
    for span in BACKTICKS.findall(outside_code(issue)):
        tree = parse(span)
        if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
            continue
        compare = tree.body[0].value
        if not (
            isinstance(compare, ast.Compare)
            and len(compare.ops) == 1
            and isinstance(compare.ops[0], ast.Eq)
            and (value := literal(ast.unparse(compare.comparators[0])))
        ):
            continue
        calls = [node for node in ast.walk(compare.left) if isinstance(node, ast.Call)]
        roots = {
            node.id for call in calls for node in ast.walk(call.func) if isinstance(node, ast.Name)
        }
        if roots & importable.keys():
            bodies.append([check(ast.get_source_segment(span, compare.left) or "", value)])
    return bodies


def inline_tests(issue: str, importable: dict[str, str]) -> list[list[str]]:
    """Tests from sentences outside sessions: calls the issue writes (`f(x)` returns ...) and the
    literals it expects after them, paired in order. `importable` maps a top-level function or
    class name to its module."""
    prose = outside_code(issue)
    bodies = []
    for paragraph in re.split(r"\n\s*\n", prose):
        calls = []
        for match in CALL.finditer(paragraph):
            call = match.group(1) or match.group(2)
            tree = parse(call)
            root = call_root(call)
            expression = tree is not None and isinstance(tree.body[0], ast.Expr)
            fresh = root in importable and call not in calls and not names_function(call, issue)
            if expression and fresh:
                calls.append(call)
        if not calls:
            continue
        pairs = segment_pairs(paragraph, calls)
        if pairs is None:
            expected = expected_literals(paragraph)
            if len(expected) != len(calls):
                continue
            pairs = list(zip(calls, expected, strict=True))
        bodies.extend(call_test(call, value, importable) for call, value in pairs)
    return bodies


def call_root(call: str) -> str:
    """The name a call starts from: `f` of `f(x)`, `Version` of `Version.parse("1")`."""
    return call.split("(")[0].split(".")[0]


def call_test(call: str, value: str, importable: dict[str, str]) -> list[str]:
    """A test body: the call's root imported from its module, the call checked against `value`."""
    root = call_root(call)
    return [f"from {importable[root]} import {root}", check(call, value)]


def names_function(call: str, issue: str) -> bool:
    """Whether prose's `f()` names the function rather than calls it: the issue calls `f` with
    arguments elsewhere ("`key()` of a one-element list" beside `tomlkit.key(["my_key"])`)."""
    if not call.endswith("()"):
        return False
    function = call.split("(")[0].rsplit(".", 1)[-1]
    return re.search(rf"(?<!\w){re.escape(function)}\((?!\))", issue) is not None


def segment_pairs(paragraph: str, calls: list[str]) -> list[tuple[str, str]] | None:
    """Each call with the one literal expected between it and the next call; None unless every
    call has exactly one."""
    positions = [paragraph.find(call) for call in calls]
    pairs = []
    for index, call in enumerate(calls):
        end = positions[index + 1] if index + 1 < len(calls) else len(paragraph)
        expected = expected_literals(paragraph[positions[index] + len(call) : end])
        if len(expected) != 1:
            return None
        pairs.append((call, expected[0]))
    return pairs


def reported_outputs(issue: str) -> list[tuple[str, str]]:
    """What the issue reports a call gives at the base, the bug itself: (`call`, its value's
    literal) of each "`is_leap_year(2000)` returns False" (says, gives, is, prints)."""
    return [(call, value) for call, value, _ in reported_with_rest(issue)]


def reported_with_rest(issue: str) -> list[tuple[str, str, str]]:
    """(`call`, the literal reported for it, the text after that literal) of each reported
    output."""
    found = []
    for match in REPORTED.finditer(issue):
        rest = issue[match.end() :]
        found_text = re.match(r"`([^`\n]+)`", rest) or PLAIN_LITERAL.match(rest)
        value = literal(found_text.group(1)) if found_text else None
        if found_text and value is not None:
            found.append((match.group(1), value, rest[found_text.end() :]))
    return found


def contrast_tests(issue: str, importable: dict[str, str]) -> list[list[str]]:
    """Tests from a reported output contrasted with the one other value its sentence gives:
    "`median([1, 2, 3, 4])` gives 3, but the median of an even count is ..., 2.5 here" (the
    call must give 2.5). Only where the clause after "but" holds exactly one literal (a
    backticked one, else a number) other than the reported value."""
    bodies = []
    for call, reported, rest in reported_with_rest(outside_code(issue)):
        contrast = CONTRAST.match(rest)
        if contrast is None or call_root(call) not in importable:
            continue
        clause = rest[contrast.end() :]
        stop = SENTENCE_END.search(clause)
        clause = clause[: stop.start() if stop else len(clause)]
        spans = [value for span in BACKTICKS.findall(clause) if (value := expected_value(span))]
        numbers = [value for number in NUMBER.findall(clause) if (value := literal(number))]
        values = set(spans or numbers) - {reported}
        if len(values) == 1:
            bodies.append(call_test(call, values.pop(), importable))
    return bodies


EXPECTED_COMMENT = re.compile(r"(?i)\s*#\s*expected(?P<output>\s+output)?\s*:\s*(?P<shown>.+)$")


def scripts(issue: str) -> list[list[str]]:
    """The lines of each code block of the issue that is a script (it parses, no `>>>`)."""
    return [
        block.rstrip().splitlines()
        for block in code_blocks(issue)
        if not has_prompt(block) and parse(block) is not None
    ]


def expected_comment_tests(issue: str) -> list[list[str]]:
    """A code block whose `print(x)` is followed by `# expected: <literal>`, or by `# expected
    output: <text>` as `print` shows it (compared with `str(x)`, its ends' whitespace aside)."""
    bodies = []
    for lines in scripts(issue):
        for number, line in enumerate(lines):
            match = EXPECTED_COMMENT.match(line)
            printed = [
                (index, found.group(1))
                for index in range(number - 1, -1, -1)
                if (found := re.match(r"print\((.*)\)\s*$", lines[index]))
            ]
            if not (match and printed):
                continue
            index, expression = printed[0]
            code = [item for item in lines[:index] if not item.lstrip().startswith("#")]
            shown = match.group("shown").strip()
            if value := literal(shown):
                bodies.append([*code, check(expression, value)])
            elif match.group("output"):
                bodies.append([*code, f"assert str({expression}).strip() == {shown!r}"])
    return bodies


def own_test_tests(issue: str) -> list[list[str]]:
    """The issue's own pytest functions ("this test would fail"): in a code block that parses,
    each `test_*` function taking no argument and undecorated (a fixture or a decorator would
    not carry over) becomes the block's imports, assignments and other definitions, then the
    function's body. The block's calls and `if __name__` lines are left out (they call the
    test itself)."""
    bodies = []
    for block in code_blocks(issue):
        tree = None if has_prompt(block) else parse(block)
        if tree is None:
            continue
        tests = [
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef)
            and node.name.startswith("test")
            and not node.decorator_list
            and not (node.args.args or node.args.posonlyargs or node.args.kwonlyargs)
            and not (node.args.vararg or node.args.kwarg)
        ]
        setup = [
            statement_source(block, node)
            for node in tree.body
            if not isinstance(node, ast.Expr | ast.If)
            and not (isinstance(node, ast.FunctionDef) and node.name.startswith("test"))
        ]
        lines = block.splitlines()
        for test in tests:
            body = "\n".join(lines[test.body[0].lineno - 1 : test.end_lineno])
            bodies.append([*setup, textwrap.dedent(body)])
    return bodies


def line_comments(code: str) -> dict[int, str]:
    """The text of each line's comment, by line number ({} for code that does not tokenize)."""
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        return {}
    return comments


def commented_expectation_tests(issue: str) -> list[list[str]]:
    """A script's expression whose comment says what it should give (`d.pop(10, None)  #
    KeyError — wrong: should return None`): the script's statements before it that are not
    shown expressions (imports, assignments, definitions; a shown one may raise, as the issue
    reports), then the check of it against the one literal the comment expects. A `print(...)`
    is left to `expected_comment_tests`."""
    bodies = []
    for block in code_blocks(issue):
        tree = None if has_prompt(block) else parse(block)
        if tree is None:
            continue
        comments = line_comments(block)
        for index, node in enumerate(tree.body):
            comment = comments.get(node.end_lineno or node.lineno, "")
            if not (comment and isinstance(node, ast.Expr)) or is_print(node.value):
                continue
            expected = expected_literals(comment)
            expression = ast.get_source_segment(block, node.value)
            if len(expected) != 1 or expression is None:
                continue
            setup = [
                statement_source(block, earlier)
                for earlier in tree.body[:index]
                if not isinstance(earlier, ast.Expr)
            ]
            bodies.append([*setup, check(expression, expected[0])])
    return bodies


def unwanted_warning_tests(issue: str) -> list[list[str]]:
    """A script whose line is commented with the built-in warning it emits
    (`create_autospec(Foo)   # DeprecationWarning: ...`), in an issue that wants none ("no
    warning", "should not warn"): the script up to that line must run with that warning an
    error. Its own top-level `warnings.simplefilter(...)` lines are left out (they would let
    the warning through)."""
    if not UNWANTED_WARNING.search(issue):
        return []
    bodies = []
    for lines in scripts(issue):
        for number, line in enumerate(lines):
            match = WARNING_COMMENT.search(line)
            if match is None or match.group(1) not in BUILTIN_WARNINGS:
                continue
            code = [
                item
                for item in [*lines[:number], line[: match.start()].rstrip()]
                if not WARNING_FILTER.match(item)
            ]
            if parse("\n".join(code)) is None:
                continue
            bodies.append([
                "import warnings",
                "with warnings.catch_warnings():",
                f'    warnings.simplefilter("error", {match.group(1)})',
                *(f"    {item}" if item.strip() else "" for item in code),
            ])  # fmt: skip
            break
    return bodies
