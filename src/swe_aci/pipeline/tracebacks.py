"""The repository functions a failing reproduction's traceback passes through: they come first
among the repair targets, innermost first. Where the test fails with an exception raised in the
repository's own code, the function that raised it names the place of the bug more surely than
the issue's words do (the localizer's choice follows). A failed assertion in the test alone
names no function, and the order stays the localizer's."""

from __future__ import annotations

import re

from swe_aci.pipeline.skeleton import Location, locations
from swe_aci.retrieval.documents import is_test_path

FRAME = re.compile(
    r'^(?:(?P<pytest>[^\s:"][^:\n"]*\.py):(?P<line>\d+): |\s*File "(?P<file>[^"\n]+\.py)", '
    r"line (?P<number>\d+))",
    re.MULTILINE,
)  # pytest's `path:line: ...` of each entry, and Python's own `File "path", line N`


def traced_lines(output: str, tree: dict[str, str]) -> list[tuple[str, int]]:
    """The (path, line) of `tree`'s source files (not tests) that the frames of `output` stand
    at, innermost first (the last frame printed)."""
    found = []
    for match in reversed(list(FRAME.finditer(output))):
        path = repository_path(match.group("pytest") or match.group("file"), tree)
        if path is not None and not is_test_path(path):
            found.append((path, int(match.group("line") or match.group("number"))))
    return found


def traceback_locations(output: str, tree: dict[str, str]) -> list[Location]:
    """The functions of `tree`'s source files (not tests) that the frames of `output` stand in,
    innermost first, each once."""
    found: list[Location] = []
    for path, line in traced_lines(output, tree):
        location = next(
            (each for each in locations(path, tree[path]) if each.start <= line <= each.end), None
        )
        if location is not None and location not in found:
            found.append(location)
    return found


def repository_path(printed: str, tree: dict[str, str]) -> str | None:
    """The path of `tree` a printed path names: itself (pytest prints paths relative to the
    repository), or the longest that an absolute path ends with (Python prints those)."""
    if printed in tree:
        return printed
    endings = [path for path in tree if printed.endswith(f"/{path}")]
    return max(endings, key=len, default=None)


def first_targets(candidates: list[Location], traced: list[Location]) -> list[Location]:
    """`candidates` with the traced functions first (by label: a traced function the localizer
    did not list joins them)."""
    labels = {location.label for location in traced}
    return [*traced, *(each for each in candidates if each.label not in labels)]
