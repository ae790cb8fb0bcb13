"""Dynamic localization: the repository's functions the failing reproduction executes.

The issue's words reach the function a user called; the bug is often in a helper it calls, in
a module the issue never names (python-dotenv's BOM is read in `parser.Reader`, natsort's path
heuristic is `utils.path_splitter`). Once a reproduction fails at the base, it runs once more
with a pytest plugin that records every code object called (`sys.setprofile`, from before the
package is imported to the end of the run, so what runs at import counts). What it writes is
read host-side as data, bounded, and never executed: each line a file name and the line its
code starts at, mapped onto the base tree's source files (tests excluded).

The targets become: the localizer's choice if the run executes it, then the functions the run
executes, with the module-level assignments and class attributes of the files it runs through,
ranked as the localizer ranks (localize.ordered_locations), those the test itself calls first
(what runs only while a module is imported after, even when the test imports it: num2words
builds a converter of each of its 50 languages at import, and their `ZERO` constants took the
targets from `base.py`'s float code), then whatever the localizer listed that the run never reached (a function the fix must
start calling is one of those).
"""

from __future__ import annotations

from dataclasses import dataclass

from swe_aci.pipeline.localize import ordered_locations
from swe_aci.pipeline.reproduction import DIRECTORY
from swe_aci.pipeline.sandbox import PLUGIN_OUTPUT, Plugin
from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.structure import targets
from swe_aci.pipeline.tracebacks import repository_path
from swe_aci.retrieval.documents import is_test_path

MAX_LINES = 20_000  # distinct code objects written; a line is a file name and a number
OUTPUT_LINE = 4096

# Only syntax Python 3.5 reads (no f-strings): a task's interpreter may be old.
PLUGIN_SOURCE = '''"""swe-aci: the code objects this pytest run calls, written at its end."""
import io
import os
import sys
import threading

import pytest

_CALLED = set()
_IN_TESTS = set()
_IN_TEST = [False]
_IMPORTING = [0]


def _profile(frame, event, arg):
    code = frame.f_code
    if code.co_name == "<module>" and os.path.isabs(code.co_filename):
        # at 0 on the return of a module that was importing when the profile began (this one)
        _IMPORTING[0] = max(0, _IMPORTING[0] + {"call": 1, "return": -1}.get(event, 0))
    if event == "call" and len(_CALLED) < 500000:
        _CALLED.add(code)
        if _IN_TEST[0] and not _IMPORTING[0]:
            _IN_TESTS.add(code)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _IN_TEST[0] = True
    try:
        yield
    finally:
        _IN_TEST[0] = False


sys.setprofile(_profile)
threading.setprofile(_profile)


def pytest_unconfigure(config):
    sys.setprofile(None)
    threading.setprofile(None)
    output = os.environ.get("OUTPUT_VARIABLE")
    if not output:
        return
    stdlib = os.path.dirname(os.__file__)
    lines = set()
    for code in _CALLED:
        name = code.co_filename
        if name.startswith("<") or (name.startswith(stdlib) and "-packages" not in name):
            continue
        lines.add("%s\\t%d\\t%d\\n" % (name, code.co_firstlineno, code in _IN_TESTS))
    with io.open(output, "w", encoding="utf-8", errors="replace") as out:
        out.writelines(sorted(lines)[:MAX_LINES])
'''.replace("OUTPUT_VARIABLE", PLUGIN_OUTPUT).replace("MAX_LINES", str(MAX_LINES))

PLUGIN = Plugin(
    directory=f"{DIRECTORY}/plugin",
    module="swe_aci_executed",
    source=PLUGIN_SOURCE,
    output=f"{DIRECTORY}/executed.txt",
)


@dataclass(frozen=True)
class Executed:
    """What a run executed of the base tree: its source files, by label the functions, and of
    those the ones a test called (not only an import)."""

    files: frozenset[str]
    functions: frozenset[str]
    in_tests: frozenset[str] = frozenset()

    def reaches(self, location: Location) -> bool:
        """Whether the run executed `location`: a function it called, or an assignment or
        class attributes of a file it ran."""
        if location.kind == "function":
            return location.label in self.functions
        return location.path in self.files

    def reaches_in_a_test(self, location: Location) -> bool:
        """Whether a test called `location`, or a function of its file if it is no function."""
        if location.kind == "function":
            return location.label in self.in_tests
        return any(label.partition("::")[0] == location.path for label in self.in_tests)


def read_executed(text: str, tree: dict[str, str]) -> Executed:
    """The plugin's lines (`file<TAB>first line<TAB>1 if a test called it, else 0`) mapped onto
    `tree`'s source files: a code object starting inside a function (its `def` or decorator
    line, a nested function's, a lambda's) marks the innermost function holding that line."""
    lines: dict[str, dict[int, bool]] = {}
    for entry in text.splitlines()[:MAX_LINES]:
        fields = entry[:OUTPUT_LINE].rsplit("\t", 2)
        if len(fields) != 3 or not fields[1].isdigit() or fields[2] not in ("0", "1"):
            continue
        name, number, in_test = fields
        path = repository_path(name, tree)
        if path is not None and not is_test_path(path):
            starts = lines.setdefault(path, {})
            starts[int(number)] = starts.get(int(number), False) or in_test == "1"
    functions: set[str] = set()
    in_tests: set[str] = set()
    for path, starts in lines.items():
        found = [each for each in targets(path, tree[path]) if each.kind == "function"]
        for start, called_in_a_test in starts.items():
            holding = [each for each in found if each.start <= start <= each.end]
            if holding:
                label = max(holding, key=lambda each: each.start).label
                functions.add(label)
                if called_in_a_test:
                    in_tests.add(label)
    return Executed(frozenset(lines), frozenset(functions), frozenset(in_tests))


def execution_order(
    issue: str,
    candidates: list[Location],
    executed: Executed,
    tree: dict[str, str],
    limit: int,
) -> list[Location]:
    """The targets in the order the module docstring gives, at most `limit` of the executed
    ones before the localizer's unreached candidates."""
    reached = [
        location
        for path in sorted(executed.files)
        for location in targets(path, tree[path])
        if executed.reaches(location)
    ]
    ranked, _ = ordered_locations(issue, reached)
    ranked.sort(key=lambda location: not executed.reaches_in_a_test(location))  # stable
    first = [candidates[0]] if candidates and executed.reaches(candidates[0]) else []
    labels = {location.label for location in first}
    ranked = (
        first
        + [location for location in ranked if location.label not in labels][
            : max(limit - len(first), 0)
        ]
    )
    labels = {location.label for location in ranked}
    return ranked + [location for location in candidates if location.label not in labels]
