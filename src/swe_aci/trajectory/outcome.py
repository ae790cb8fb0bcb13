"""What an episode produced, said plainly: whether there is a patch, whether it only adds files
the agent created for itself (a reproduction script nothing uses), and how the episode ended.

The recorded exit status keeps SWE-agent's form (`submitted (exit_format)` for an autosubmission);
this is the reading of it a user and a script need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath

from swe_aci.trajectory.exits import EXIT_REASONS, SUBMITTED

FILE_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")
IMPORT = re.compile(r"^\s*(from|import)\s")
AUTOSUBMITTED = re.compile(rf"^{SUBMITTED} \((\w+)\)$")


class PatchKind(Enum):
    """What the submission is; the value is the exit code of `swe-aci run`."""

    FIX = 0  # it changes the repository's own files (or adds files they use)
    NONE = 3  # empty: nothing was changed
    NEW_FILES_ONLY = 4  # it only adds files nothing else in it uses (scratch, reproduction)


@dataclass(frozen=True)
class Outcome:
    kind: PatchKind
    files: tuple[str, ...]  # every file the patch touches
    unused_new_files: tuple[str, ...]  # files it adds that nothing else in it uses
    ended: str  # the exit status without the `submitted (...)` wrapper: submitted, exit_cost...

    @property
    def summary(self) -> str:
        """One line: the patch, then how the episode ended."""
        count = len(self.files)
        if self.kind is PatchKind.FIX:
            patch = f"a patch was produced ({count} file{'s' if count != 1 else ''} changed)"
        elif self.kind is PatchKind.NEW_FILES_ONLY:
            patch = (
                "no fix: the patch only adds files the agent created that nothing else uses ("
                + ", ".join(self.unused_new_files)
                + ")"
            )
        else:
            patch = "no patch was produced (nothing changed)"
        return f"{patch}; {ending(self.ended, self.kind is not PatchKind.NONE)}"


def ending(status: str, has_patch: bool) -> str:
    """How the episode ended, in words."""
    if status == SUBMITTED:
        return "the model submitted"
    reason = EXIT_REASONS.get(status, status)
    taken = ", its changes were submitted automatically" if has_patch else ""
    return f"the episode ended on the {reason} ({status}){taken}"


def outcome_of(exit_status: str, submission: str) -> Outcome:
    changes = changed_files(submission)
    files = tuple(changes)
    created = [path for path, new in changes.items() if new]
    unused = tuple(path for path in created if not used_elsewhere(path, submission))
    match = AUTOSUBMITTED.match(exit_status)
    ended = match.group(1) if match else exit_status
    if not submission.strip():
        kind = PatchKind.NONE
    elif files and len(unused) == len(files):
        kind = PatchKind.NEW_FILES_ONLY
    else:
        kind = PatchKind.FIX
    return Outcome(kind, files, unused, ended)


def changed_files(patch: str) -> dict[str, bool]:
    """Each file of a git diff, and whether the diff creates it."""
    files: dict[str, bool] = {}
    current = None
    for line in patch.splitlines():
        header = FILE_HEADER.match(line)
        if header:
            current = header.group(2)
            files[current] = False
        elif current is not None and line.startswith("new file mode"):
            files[current] = True
    return files


def used_elsewhere(path: str, patch: str) -> bool:
    """Whether a line another file of the patch adds uses `path`: names its file (`data.json`,
    `reproduce.py`) or, for a Python module, imports it (`import x`, `from pkg.x import y`,
    `from . import x`)."""
    name = PurePosixPath(path)
    file_name = re.compile(rf"(?<![\w.-]){re.escape(name.name)}(?![\w-])")
    module = re.compile(rf"(?<!\w){re.escape(name.stem)}(?!\w)") if name.suffix == ".py" else None
    for other, lines in added_lines(patch).items():
        if other == path:
            continue
        for line in lines:
            if file_name.search(line):
                return True
            if module is not None and IMPORT.match(line) and module.search(line):
                return True
    return False


def added_lines(patch: str) -> dict[str, list[str]]:
    """The lines each file of a git diff adds."""
    added: dict[str, list[str]] = {}
    current = None
    for line in patch.splitlines():
        header = FILE_HEADER.match(line)
        if header:
            current = header.group(2)
            added[current] = []
        elif current is not None and line.startswith("+") and not line.startswith("+++ "):
            added[current].append(line[1:])
    return added
