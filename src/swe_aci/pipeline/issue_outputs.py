"""Tests from an example that prints and the output the issue expects it to print: a script, or
a `>>>` session whose shown values are all printed, then a code block of output that a
paragraph with an expectation word introduces ("### Expected Output", "Expected: ... as with a
header row:"). The test runs the example with its printed text captured and compares it with
that block line by line (trailing spaces and the blank lines around aside; an object's address,
`0x7f9b...`, matches any, `0x...`). None when the block is the output the issue reports. A
script that prints, the output it printed, then a paragraph expecting an exception instead ("All
three should raise `ExpansionLimitException`"): each printed call must raise it. A script that
prints one value, then a sentence giving what an earlier release printed and what this one
prints ("In `v3.2.1` this printed `.._` but in `v3.2.2` it prints `_._._`", a regression): it
must print the earlier one."""

from __future__ import annotations

import ast
import itertools
import re
import textwrap
from collections.abc import Mapping

from swe_aci.pipeline.imports import with_imports
from swe_aci.pipeline.issue_literals import (
    EXPECTATION,
    FENCE,
    has_prompt,
    indent,
    is_print,
    literal,
    statement_source,
)
from swe_aci.pipeline.issue_sessions import (
    BUILTIN_EXCEPTIONS,
    EARLIER_RELEASE,
    expected_exception,
    sessions,
)
from swe_aci.pipeline.skeleton import parse

ADDRESS = re.compile(r"0x(?:[0-9a-fA-F]+|\.\.\.)")
PRINTED_BEFORE = re.compile(
    r"(?i)\b(?:printed|returned|gave|produced|showed|used\s+to\s+(?:print|return|give|produce|show))"
    r"\s+`([^`\n]+)`"
)
PRINTS_NOW = re.compile(r"(?i)\b(?:prints|returns|gives|produces|shows)\s+`([^`\n]+)`")
RELEASE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*\b")


def printed_output_tests(issue: str) -> list[list[str]]:
    """One test body per printing example followed by the output it should print."""
    blocks = list(FENCE.finditer(issue))
    bodies = []
    for index, block in enumerate(blocks):
        example = printing_example(block.group(1))
        if example is None:
            continue
        code, reported = example
        expected = None
        for before, later in zip(blocks[index:], blocks[index + 1 :], strict=False):
            text = later.group(1)
            if not output_like(text):
                break
            if EXPECTATION.search(introduction(issue[before.end() : later.start()])):
                expected = text
                break
            reported = reported if reported is not None else text
        if expected is None or lines(expected) == lines(reported or ""):
            continue
        bodies.append(printed_check(code, expected))
    return bodies


def raised_instead_tests(issue: str, exceptions: frozenset[str]) -> list[list[str]]:
    """One test body per value a script prints that the paragraph after its output says should
    raise an exception instead (a built-in one, a dotted name or one of the repository's,
    `exceptions`): the script's statements before it that are not shown expressions, then the
    printed expression in `pytest.raises`. A printed value that calls nothing is left out."""
    blocks = list(FENCE.finditer(issue))
    bodies = []
    for index, (block, shown) in enumerate(itertools.pairwise(blocks)):
        script = textwrap.dedent(block.group(1))
        tree = None if has_prompt(script) else parse(script)
        if tree is None or not prints(script) or not output_like(shown.group(1)):
            continue
        paragraph = paragraph_after(issue, blocks, index + 1)
        name = expected_exception(paragraph, exceptions)
        if name is None or not ("." in name or name in BUILTIN_EXCEPTIONS | exceptions):
            continue
        setup: list[str] = []
        for node in tree.body:
            if not isinstance(node, ast.Expr):
                setup.append(statement_source(script, node))
            elif is_print(node.value) and (printed := printed_call(script, node.value)):
                bodies.append([*setup, f"with pytest.raises({name}):", indent(printed)])
    return bodies


def earlier_release_tests(
    issue: str, importable: dict[str, str], aliases: Mapping[str, str] | None = None
) -> list[list[str]]:
    """One test body per script printing one value whose next paragraph says an earlier
    release printed another: a release named (`v3.2.1`) or an earlier one spoken of ("the
    previous version", "used to"), exactly one value it printed then and one it prints now,
    not the same. The script, with the imports it leaves out (an earlier block has them), must
    print the earlier value."""
    blocks = list(FENCE.finditer(issue))
    bodies = []
    for index, block in enumerate(blocks):
        script = textwrap.dedent(block.group(1))
        tree = None if has_prompt(script) else parse(script)
        if tree is None or not prints_once(tree):
            continue
        paragraph = paragraph_after(issue, blocks, index)
        before = PRINTED_BEFORE.findall(paragraph)
        now = PRINTS_NOW.findall(paragraph)
        earlier = RELEASE.search(paragraph) or EARLIER_RELEASE.search(paragraph)
        if earlier and len(before) == 1 and len(now) == 1 and before[0] != now[0]:
            code = with_imports(script.rstrip(), importable, frozenset(), aliases)
            bodies.append(printed_check(code.splitlines(), before[0]))
    return bodies


def prints_once(tree: ast.Module) -> bool:
    """Whether a script prints exactly once: one `print` call, a statement of its own at the
    top level (not in a loop or a function)."""
    calls = [node for node in ast.walk(tree) if is_print(node)]
    return len(calls) == 1 and any(
        isinstance(node, ast.Expr) and node.value is calls[0] for node in tree.body
    )


def paragraph_after(issue: str, blocks: list[re.Match[str]], index: int) -> str:
    """The first paragraph of the prose between code block `index` and the next."""
    end = blocks[index + 1].start() if index + 1 < len(blocks) else len(issue)
    return re.split(r"\n\s*\n", issue[blocks[index].end() : end].strip())[0]


def printed_call(script: str, call: ast.Call) -> str | None:
    """The source of the one value a `print(...)` prints, when it calls something."""
    if len(call.args) != 1 or call.keywords:
        return None
    value = call.args[0]
    if not any(isinstance(node, ast.Call) for node in ast.walk(value)):
        return None
    return ast.get_source_segment(script, value)


def introduction(prose: str) -> str:
    """The paragraph that introduces the block after `prose` (its last): an expectation word
    further back belongs to other sentences (schedule's "which ... should be today" comes
    before "If I change it to ..., then the output is the following:" and that output)."""
    return re.split(r"\n\s*\n", prose.strip())[-1]


def printing_example(block: str) -> tuple[list[str], str | None] | None:
    """The code of a block that prints, and the output it shows (a session's), if any: a script
    that calls `print`, or a session whose every shown value is printed."""
    if has_prompt(block):
        found = sessions(block)
        statements = [statement for session in found for statement in session.statements]
        shown = [statement for statement in statements if statement.output]
        if not shown or any(not prints(statement.source) for statement in shown):
            return None
        output = "\n".join(line for statement in shown for line in statement.output)
        return [statement.source for statement in statements], output
    if prints(block):
        return block.rstrip().splitlines(), None
    return None


def prints(code: str) -> bool:
    tree = parse(code)
    return tree is not None and any(map(is_print, ast.walk(tree)))


def output_like(block: str) -> bool:
    """Whether a block shows output, not code: no `>>>`, and it is not Python (values as
    printed, one a line, are)."""
    if has_prompt(block) or not block.strip():
        return False
    tree = parse(block)
    return tree is None or literal(block) is not None or all(map(is_printed_value, tree.body))


def is_printed_value(node: ast.stmt) -> bool:
    """A line of output that parses as Python: a literal, or a bare word (`done`)."""
    if not isinstance(node, ast.Expr):
        return False
    if isinstance(node.value, ast.Name):
        return True
    try:
        ast.literal_eval(node.value)
    except ValueError:
        return False
    return True


def lines(text: str) -> list[str]:
    return [ADDRESS.sub("0x...", line.rstrip()) for line in text.strip("\n").splitlines()]


def printed_check(code: list[str], expected: str) -> list[str]:
    """The example run as the reporter ran it (a module of its own named `__main__`: a lambda
    it prints is `<lambda>`, not a test's local), with `print`'s text captured, its lines
    compared with `expected`'s."""
    normalize = "line.rstrip()"
    if ADDRESS.search(expected):
        normalize = f're.sub({ADDRESS.pattern!r}, "0x...", line.rstrip())'
    example = "\n".join(code) + "\n"
    return [
        "import contextlib",
        "import io",
        *(["import re"] if "re.sub" in normalize else []),
        "printed = io.StringIO()",
        "with contextlib.redirect_stdout(printed):",
        f'    exec(compile({example!r}, "issue_example.py", "exec"), {{"__name__": "__main__"}})',
        f"shown = [{normalize} for line in printed.getvalue().strip('\\n').splitlines()]",
        f"assert shown == {lines(expected)!r}",
    ]
