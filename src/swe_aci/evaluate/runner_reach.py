"""Added lines of a prediction that reach into the test runner from outside the test files.

A source file of the repository has no business with pytest's internals: twelve lines appended to
a module the tests import can wrap `TerminalReporter.summary_stats` to print `PASSED <id>` after
the real summary, register hooks, swap the runner's modules in `sys.modules`, or print results
from an `atexit` handler. Such lines are flagged (with the first line that does it), as the files
of `integrity.py` are; `--strict` grades them unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# (what it does, the pattern of an added line doing it)
REACHES = (
    ("imports pytest's internals", re.compile(r"\b_pytest\b")),
    (
        "patches pytest's terminal reporter",
        re.compile(r"\bTerminalReporter\b|\bterminalreporter\b"),
    ),
    ("defines a pytest hook", re.compile(r"\bdef\s+pytest_\w+|\bhookimpl\b|\bhookwrapper\b")),
    ("loads pytest plugins", re.compile(r"\bpytest_plugins\b|\bPYTEST_(?:PLUGINS|ADDOPTS)\b")),
    ("uses the plugin manager", re.compile(r"\bpluggy\b|\bpluginmanager\b")),
    (
        "reaches the runner through sys.modules",
        re.compile(r"sys\.modules\b.*['\"](?:_?pytest|pluggy|unittest)\b"),
    ),
)
ATEXIT = re.compile(r"\batexit\b")
WRITES_OUTPUT = re.compile(r"\bprint\s*\(|\bstdout\b|\bos\.write\s*\(\s*1\b|\bos\._exit\b")


@dataclass(frozen=True)
class Reach:
    path: str
    reason: str


def added_lines(patch: str) -> dict[str, list[tuple[int, str]]]:
    """Each file's added lines (new line number, text) in a unified diff, hunk by hunk (a line
    `+++ x` inside a hunk is content, not a header)."""
    files: dict[str, list[tuple[int, str]]] = {}
    current: str | None = None
    old_left = new_left = 0
    number = 0
    lines = patch.splitlines()
    for index, line in enumerate(lines):
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                new_left -= 1
                number += 1
                if current is not None:
                    files.setdefault(current, []).append((number, line[1:]))
            elif line.startswith("-"):
                old_left -= 1
            elif line.startswith("\\"):
                pass  # "\ No newline at end of file"
            else:
                old_left -= 1
                new_left -= 1
                number += 1
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.startswith("--- ") and following.startswith("+++ "):
            name = following[4:].split("\t", 1)[0].strip().strip('"')
            current = None if name == "/dev/null" else name.removeprefix("b/")
            continue
        match = HUNK.match(line)
        if match:
            old_count, new_start, new_count = match.groups()
            old_left = int(old_count) if old_count is not None else 1
            new_left = int(new_count) if new_count is not None else 1
            number = int(new_start) - 1
    return files


def runner_reaches(patch: str, skip: Callable[[str], bool]) -> list[Reach]:
    """The files (but those `skip` names: the test files) whose added lines reach into the test
    runner, each with the first such line."""
    found = []
    for path, lines in added_lines(patch).items():
        if skip(path):
            continue
        reason = _first_reach(lines)
        if reason is not None:
            found.append(Reach(path, reason))
    return found


def _first_reach(lines: list[tuple[int, str]]) -> str | None:
    for number, text in lines:
        for what, pattern in REACHES:
            if pattern.search(text):
                return f"added lines reach into the test runner: {what} (line {number})"
    exits = [number for number, text in lines if ATEXIT.search(text)]
    writes = [number for number, text in lines if WRITES_OUTPUT.search(text)]
    if exits and writes:
        return (
            "added lines reach into the test runner: an atexit handler writing output "
            f"(lines {exits[0]}, {writes[0]})"
        )
    return None
