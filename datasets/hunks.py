"""Cut a fix out of the diff between two unpacked release sdists.

    python datasets/hunks.py OLD_DIR NEW_DIR                 # list every hunk, numbered per file
    python datasets/hunks.py OLD_DIR NEW_DIR pkg/mod.py:2,5 tests/test_mod.py:7
                                                             # print those hunks as one patch

The patch has git's `a/` `b/` prefixes and paths relative to the sdist root, as task rows need.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def file_diffs(old: Path, new: Path) -> dict[str, tuple[str, list[str]]]:
    """Path -> (header, hunks) for every file that differs, from `diff -ruN`."""
    got = subprocess.run(
        ["diff", "-ruN", "--exclude=*.egg-info", "--exclude=PKG-INFO", old.name, new.name],
        cwd=old.parent,
        capture_output=True,
        text=True,
    )
    diffs: dict[str, tuple[str, list[str]]] = {}
    path = ""
    for line in got.stdout.splitlines(keepends=True):
        if line.startswith("diff -ruN"):
            path = line.split()[-1].split("/", 1)[1]
            diffs[path] = (f"--- a/{path}\n+++ b/{path}\n", [])
        elif line.startswith(("--- ", "+++ ")) and not diffs[path][1]:
            continue
        elif line.startswith("@@"):
            diffs[path][1].append(line)
        else:
            hunks = diffs[path][1]
            hunks[-1] += line
    return diffs


def renumber(hunks: list[str]) -> str:
    """Join a subset of one file's hunks, with new-file line numbers as if only they were applied."""
    joined, shift = "", 0
    for hunk in hunks:
        head, _, body = hunk.partition("\n")
        match = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@(.*)", head)
        assert match, head
        old_start, old_len, new_len, rest = match.groups()
        old_len, new_len = int(old_len or 1), int(new_len or 1)
        new_start = int(old_start) + shift if old_len or not new_len else int(old_start) + shift + 1
        joined += f"@@ -{old_start},{old_len} +{new_start},{new_len} @@{rest}\n{body}"
        shift += new_len - old_len
    return joined


def main() -> int:
    old, new, *selections = sys.argv[1:]
    diffs = file_diffs(Path(old).resolve(), Path(new).resolve())
    if not selections:
        for path, (_, hunks) in diffs.items():
            for number, hunk in enumerate(hunks, 1):
                print(f"{path}:{number}  {hunk.splitlines()[0]}")
        return 0
    for selection in selections:
        path, _, numbers = selection.partition(":")
        header, hunks = diffs[path]
        chosen = [int(n) for n in numbers.split(",")] if numbers else range(1, len(hunks) + 1)
        sys.stdout.write(header + renumber([hunks[n - 1] for n in chosen]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
