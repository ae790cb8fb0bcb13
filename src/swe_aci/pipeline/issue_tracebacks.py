"""A script followed by the traceback it raises, taken as the session of its statements. An issue
often shows the crash in a code block of its own after the script (wcmatch: the `fnmatch` call,
then "Should result `True` but instead the fnmatch call raises this exception:" and a `re.error`
traceback); the session's tests (`issue_sessions.session_tests`) follow from it: the script must
run, or raise what the prose after it expects. Also a shell line running Python's `-c` code
under environment variables, followed by its traceback (`$ XDG_DATA_DIRS=':' python -c '...'`):
the code must run with those variables set."""

from __future__ import annotations

import ast
import re
import shlex
import textwrap

from swe_aci.pipeline.issue_literals import FENCE, has_prompt, indent, statement_source
from swe_aci.pipeline.issue_sessions import (
    TRACEBACK,
    Session,
    Statement,
    expected_exception,
    setup_for,
)
from swe_aci.pipeline.skeleton import parse

SHELL_PROMPT = re.compile(r"^\s*\$\s+(.*)$")
ENVIRONMENT_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.DOTALL)
PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?$")


def script_sessions(issue: str) -> list[Session]:
    """Each script (a code block that parses, no `>>>`) whose next code block is a traceback,
    as a session: its top-level statements, the last one showing that traceback; the prose
    between the two blocks and after the traceback (up to the next block) is the session's."""
    blocks = [
        (found.start(), found.end(), textwrap.dedent(found.group(1)))
        for found in FENCE.finditer(issue)
    ]
    sessions = []
    for index, (start, end, script) in enumerate(blocks[:-1]):
        shown_start, shown_end, shown = blocks[index + 1]
        if (
            has_prompt(script)
            or has_prompt(shown)
            or not any(TRACEBACK.match(line) for line in shown.splitlines())
        ):
            continue
        tree = parse(script)
        output = [line.strip() for line in shown.splitlines() if line.strip()]
        if tree is None or not tree.body or Statement("", output).raised is None:
            continue
        nodes = [inner for node in tree.body for inner in main_guarded(node)]
        statements = [Statement(statement_source(script, node)) for node in nodes]
        statements[-1].output = output
        following = blocks[index + 2][0] if index + 2 < len(blocks) else len(issue)
        prose = f"{issue[end:shown_start]}\n{issue[shown_end:following]}"
        sessions.append(Session(statements, prose, setup_for(statements, issue[:start])))
    return sessions


def main_guarded(node: ast.stmt) -> list[ast.stmt]:
    """The statements of an `if __name__ == "__main__":` block (the reporter ran the script, a
    test imports nothing as `__main__`), else the statement itself."""
    test = node.test if isinstance(node, ast.If) and not node.orelse else None
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    ):
        return list(node.body)
    return [node]


def shell_line_tests(issue: str, exceptions: frozenset[str]) -> list[list[str]]:
    """Each shell line of a code block (`$ ...`) that is Python's `-c` code under environment
    variables and nothing else (no pipe, no argument after the code), whose output up to the
    next `$` line holds a traceback: the code, run with the variables set (and put back after:
    the reproduction shares its process with the regression tests), must not raise. None where
    the prose after the block expects an exception (the fix may raise another)."""
    bodies = []
    for found in FENCE.finditer(issue):
        lines = textwrap.dedent(found.group(1)).splitlines()
        following = FENCE.search(issue, found.end())
        prose = issue[found.end() : following.start() if following else len(issue)]
        if expected_exception(prose, exceptions) is not None:
            continue
        for number, line in enumerate(lines):
            prompt = SHELL_PROMPT.match(line)
            command = python_command(prompt.group(1)) if prompt else None
            if command is None:
                continue
            output = []
            for later in lines[number + 1 :]:
                if SHELL_PROMPT.match(later):
                    break
                output.append(later)
            if not any(TRACEBACK.match(shown) for shown in output):
                continue
            variables, code = command
            bodies.append(
                [
                    "import os",
                    "from unittest import mock",
                    f"with mock.patch.dict(os.environ, {variables!r}):",
                    indent(code),
                ]
            )
    return bodies


def python_command(line: str) -> tuple[dict[str, str], str] | None:
    """The environment variables and the code of `VAR=value ... python -c 'code'`, when the
    line is that and the code parses; else None."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    variables = {}
    while words and (assignment := ENVIRONMENT_ASSIGNMENT.match(words[0])):
        variables[assignment.group(1)] = assignment.group(2)
        words.pop(0)
    if len(words) != 3 or not PYTHON.match(words[0]) or words[1] != "-c":
        return None
    code = words[2]
    return (variables, code) if parse(code) is not None else None
