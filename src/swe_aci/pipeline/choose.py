"""Validation and choice: distinct edits (by canonical form) are tested once each; the best is
the one the reproduction test passes on (then the most of its tests passing), with the fewest
regressions of the repository's own tests, then the most samples agreeing on it (majority), then
the smallest diff. One that breaks existing tests and passes no reproduction is never submitted."""

from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass, field

from swe_aci.env.diff import file_headers
from swe_aci.pipeline import regressions
from swe_aci.pipeline.repair import TEMPLATE, Edit
from swe_aci.retrieval.documents import Document, is_test_path

TOLERATED_REGRESSED_FUNCTIONS = 2


@dataclass
class Group:
    """One distinct edit, the samples (1-based numbers) that proposed it and its scores."""

    edit: Edit
    label: str  # what it changes: `path::name` (two joined by ` + `)
    samples: list[int] = field(default_factory=list)
    reproduced: bool | None = None  # None: no reproduction test, or not tested
    reproduction_passes: int = 0  # tests of the reproduction that pass on it
    regressions: int | None = None  # None: no regression signal (no existing test ran)
    tests_at_base: int = 0  # the existing tests run on it that pass at the base
    # regressed tests pinning a literal the edit replaces by the name (pinned.py): not
    # counted in `regressions`; test id -> that literal
    pinned: dict[str, str] = field(default_factory=dict)
    # the distinct test functions among `regressions` (a parametrized test's cases are one)
    regressed_functions: int = 0
    size: int = 0
    timed_out: bool = False  # a test run on it did not finish (it hangs, or the budget ended)

    def key(self) -> tuple[int, int, int, int, int, int]:
        return (
            1 if self.reproduced else 0,
            self.reproduction_passes,
            0 if self.timed_out else 1,
            -(self.regressions or 0),
            len(self.samples),
            -self.size,
        )

    @property
    def solved(self) -> bool:
        """The reproduction test passes on it and no existing test regresses: the search stops."""
        return bool(self.reproduced) and not self.regressions

    @property
    def harmful(self) -> bool:
        """Never submitted: it breaks existing tests, or its tests do not finish, and it passes
        no reproduction test (a patch that hangs the tests is worse than none); or it breaks
        most of the existing tests that passed at the base, or more than
        TOLERATED_REGRESSED_FUNCTIONS of their test functions, whatever else passes on it (an
        exception-only reproduction passes on code that raises everywhere: dateutil's isoparse
        took a template breaking 567 of its 567 tests; arrow's `_format_timeframe` fallback
        passed its reproduction and broke 26 of 238). A right fix may break the test or two
        that pinned the old behaviour (upstream changes those with the fix), not more."""
        broken = bool(self.regressions) or self.timed_out
        return (
            (broken and not self.reproduced)
            or self._breaks_most
            or self._breaks_many
            or self._blind_and_breaking
        )

    @property
    def _blind_and_breaking(self) -> bool:
        """A template edit (a mutation no one wrote for the issue: `!=` made `==`) that breaks
        an existing test: passing the issue's test, it changed behaviour the issue never asked
        to change (h11's `len(lengths) != 1` made `== 1` raised "conflicting Content-Length
        headers" on every single header: it passed the test of a too-long one and broke 1 of
        66 tests). The test or two a right fix breaks come with a model's edit, not a
        template's."""
        return self.edit.source == TEMPLATE and bool(self.regressions)

    @property
    def _breaks_most(self) -> bool:
        return 2 * (self.regressions or 0) > self.tests_at_base > 0

    @property
    def _breaks_many(self) -> bool:
        return self.regressed_functions > TOLERATED_REGRESSED_FUNCTIONS

    def harm(self) -> str:
        """What makes it harmful, in words."""
        if self.reproduced:
            functions = (
                f" (in {self.regressed_functions} test functions)"
                if self.regressed_functions != self.regressions
                else ""
            )
            blind = "a template edit that " if self._blind_and_breaking else ""
            return (
                f"{blind}breaks {self.regressions} of the {self.tests_at_base} existing tests "
                f"that pass at the base{functions}"
            )
        harm = (
            "makes the tests time out"
            if self.timed_out
            else f"breaks {self.regressions} existing tests"
        )
        return f"{harm} and passes no reproduction test"

    def describe(self) -> str:
        reproduction = {True: "passes", False: "fails", None: "not run"}[self.reproduced]
        regressions = (
            "no regression signal"
            if self.regressions is None
            else f"regressions {self.regressions}"
        )
        hangs = ", its tests time out" if self.timed_out else ""
        return (
            f"samples {','.join(map(str, self.samples))} ({self.edit.source}): reproduction "
            f"test {reproduction}, {regressions}{self.pinned_note()}{hangs}, {self.size} diff lines"
        )

    def pinned_note(self) -> str:
        if not self.pinned:
            return ""
        literals = ", ".join(f"`{literal}`" for literal in dict.fromkeys(self.pinned.values()))
        return (
            f" (and {len(self.pinned)} that pin {literals}, which the edit replaces by the "
            "issue's name)"
        )


def add_edit(
    groups: list[Group], number: int, label: str, edit: Edit, originals: dict[str, str]
) -> tuple[Group, bool]:
    """The group of samples proposing the same canonical edit of the same target, with sample
    `number` added; and whether it is new."""
    for group in groups:
        if group.label == label and group.edit.canonical == edit.canonical:
            group.samples.append(number)
            return group, False
    size = sum(diff_size(originals[path], text) for path, text in edit.texts.items())
    group = Group(edit, label, [number], size=size)
    groups.append(group)
    return group, True


def diff_size(before: str, after: str) -> int:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return sum(1 for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))


def best(groups: list[Group]) -> Group | None:
    """The group with the highest key, of the harmless ones when there are any; the earliest on
    a full tie."""
    harmless = [group for group in groups if not group.harmful]
    return _highest(harmless or groups)


def _highest(groups: list[Group]) -> Group | None:
    chosen: Group | None = None
    for group in groups:
        if chosen is None or group.key() > chosen.key():
            chosen = group
    return chosen


def reason(chosen: Group, groups: list[Group]) -> str:
    """Why `chosen` won, in words, for the final line."""
    parts = []
    if chosen.reproduced:
        parts.append("the reproduction test passes on it")
    elif chosen.reproduced is False:
        parts.append("no candidate passes the reproduction test")
    if chosen.regressions is not None:
        parts.append(f"{chosen.regressions} existing tests regress{chosen.pinned_note()}")
    else:
        parts.append("no regression signal (no existing test ran)")
    if len(groups) > 1:
        parts.append(
            f"{len(chosen.samples)} of {sum(len(g.samples) for g in groups)} samples agree"
        )
    return "; ".join(parts)


def related_tests(tree: dict[str, str], path: str, name: str, limit: int) -> list[str]:
    """The repository's test files for the module at `path` and the function `name`
    (regressions.py), at most `limit`."""
    return regressions.related_tests(tree, [path] if path else [], [name] if name else [], limit)


DOCUMENTATION_DIRECTORIES = {"doc", "docs", "documentation"}
# the project's build and task scripts at its root: they run setuptools or nox, they are not the
# library (backoff's localizer chose the `setup_kwargs` of poetry's generated setup.py)
BUILD_SCRIPTS = {"setup.py", "noxfile.py", "fabfile.py", "conftest.py"}


def documents_of(tree: dict[str, str], extensions: tuple[str, ...] = (".py",)) -> list[Document]:
    """The source files BM25 ranks: not tests, not the documentation's examples (a bug report
    quoting the docs' example class would otherwise send the repair there), not the build
    scripts at the root."""
    return [
        Document(path, text)
        for path, text in sorted(tree.items())
        if path.endswith(extensions)
        and not is_test_path(path)
        and path.split("/")[0].lower() not in DOCUMENTATION_DIRECTORIES
        and path not in BUILD_SCRIPTS
    ]


IMPORT_LINE = re.compile(r"^\+\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE)


def scratch_only(patch: str) -> bool:
    """Whether the patch only adds new files that no other file of it imports (an agent's
    `reproduce.py` and the like): it changes nothing of the repository's code."""
    headers = file_headers(patch)
    if not headers or any(header.old is not None for header in headers):
        return False
    imported = {
        part
        for match in IMPORT_LINE.finditer(patch)
        for name in match.groups()
        if name
        for part in name.split(".")
    }
    stems = [posixpath.splitext(posixpath.basename(header.new or ""))[0] for header in headers]
    return not any(stem in imported for stem in stems if stem != "__init__")
