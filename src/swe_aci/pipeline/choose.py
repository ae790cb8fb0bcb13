"""Validation and choice: distinct edits (by canonical form) are tested once each; the best is
the one the reproduction test passes on, with the fewest regressions of the repository's own
tests, then the most samples agreeing on it (majority), then the smallest diff."""

from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass, field

from swe_aci.env.diff import file_headers
from swe_aci.pipeline.repair import Edit
from swe_aci.pipeline.skeleton import Location
from swe_aci.rag.documents import Document, is_test_path


@dataclass
class Group:
    """One distinct edit and the samples (1-based numbers) that proposed it."""

    edit: Edit
    location: Location
    samples: list[int] = field(default_factory=list)
    reproduced: bool | None = None  # None: no reproduction test, or not tested
    regressions: int | None = None  # None: the existing tests could not be run
    size: int = 0

    def key(self) -> tuple[int, int, int, int]:
        return (
            1 if self.reproduced else 0,
            -(self.regressions or 0),
            len(self.samples),
            -self.size,
        )

    def describe(self) -> str:
        reproduction = {True: "passes", False: "fails", None: "not run"}[self.reproduced]
        regressions = "not run" if self.regressions is None else str(self.regressions)
        return (
            f"samples {','.join(map(str, self.samples))}: reproduction test {reproduction}, "
            f"regressions {regressions}, {self.size} diff lines"
        )


def group_edits(edits: list[tuple[int, Location, Edit]], originals: dict[str, str]) -> list[Group]:
    """Samples proposing the same canonical edit of the same function become one group."""
    groups: dict[tuple[str, str], Group] = {}
    for number, location, edit in edits:
        key = (location.label, edit.canonical)
        if key not in groups:
            groups[key] = Group(edit, location, size=diff_size(originals[location.path], edit.text))
        groups[key].samples.append(number)
    return list(groups.values())


def diff_size(before: str, after: str) -> int:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return sum(1 for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))


def best(groups: list[Group]) -> Group | None:
    """The group with the highest key; the earliest on a full tie."""
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
        parts.append(f"{chosen.regressions} existing tests regress")
    if len(groups) > 1:
        parts.append(
            f"{len(chosen.samples)} of {sum(len(g.samples) for g in groups)} samples agree"
        )
    return "; ".join(parts) or "the only candidate"


def related_tests(tree: dict[str, str], path: str, name: str, limit: int) -> list[str]:
    """The repository's test files that mention the module at `path` or the function `name`
    (all of them when none does), at most `limit`."""
    if limit == 0:
        return []
    tests = sorted(
        path
        for path in tree
        if path.endswith(".py")
        and is_test_path(path)
        and posixpath.basename(path).startswith("test")
    )
    stem = posixpath.splitext(posixpath.basename(path))[0]
    words = re.compile(rf"\b({'|'.join(re.escape(word) for word in (stem, name) if word)})\b")
    mentioning = [path for path in tests if words.search(tree[path])]
    return (mentioning or tests)[:limit]


def documents_of(tree: dict[str, str], extensions: tuple[str, ...] = (".py",)) -> list[Document]:
    """The non-test source files BM25 ranks."""
    return [
        Document(path, text)
        for path, text in sorted(tree.items())
        if path.endswith(extensions) and not is_test_path(path)
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
