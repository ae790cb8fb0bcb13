"""Where the pipeline's localization puts the target a real fix changes, without the model.

For each row of a task file whose base is a PyPI sdist (`environment.source.pypi_sdist`, as in
`datasets/real_bugs.jsonl`), the sdist is downloaded (pip, checked against the row's sha256),
its source files ranked by `pipeline.localize.candidate_locations` as the pipeline does, and the
targets the row's gold patch changes (the innermost target holding each changed line of the
base) are looked up in that list: the rank of the first one (1 is best, `-` when it is not among
the candidates), whether it is within the `locations` the search tries by itself (3), and which
candidate the issue picks without the model (`pipeline.localize.issue_choice`), if any.

    python bench/localization.py [datasets/real_bugs.jsonl] [--functions 12]

The figures compare two versions of the code in the same run by running the script once with
each `src` (`PYTHONPATH=<other>/src`). The gold patch is read here, on the host, to grade the
localization; nothing of it reaches the pipeline.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swe_aci.pipeline.choose import documents_of
from swe_aci.pipeline.localize import candidate_locations, issue_choice
from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.structure import targets

HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
TRIED = 3  # strategy.repair.locations of the `local` config


def changed_lines(patch: str) -> dict[str, set[int]]:
    """Per file, the base's lines the patch removes, or after which it adds lines."""
    lines: dict[str, set[int]] = {}
    path, number = "", 0
    for line in patch.splitlines():
        if line.startswith("--- "):
            continue
        if line.startswith("+++ "):
            path = line[4:].removeprefix("b/")
        elif match := HUNK.match(line):
            number = int(match.group(1))
        elif line.startswith("-"):
            lines.setdefault(path, set()).add(number)
            number += 1
        elif line.startswith("+"):
            lines.setdefault(path, set()).add(max(number - 1, 1))
        elif line.startswith(" "):
            number += 1
    return lines


def gold_targets(tree: dict[str, str], patch: str) -> list[str]:
    """The innermost target holding each changed line, in the patch's order."""
    found: list[str] = []
    for path, lines in changed_lines(patch).items():
        located: list[Location] = targets(path, tree.get(path, ""))
        for number in sorted(lines):
            holding = [each for each in located if each.start <= number <= each.end]
            if holding:
                inner = min(holding, key=lambda each: each.end - each.start)
                if inner.label not in found:
                    found.append(inner.label)
    return found


def sdist_tree(spec: str, sha256: str, scratch: Path) -> dict[str, str]:
    """The sdist's Python files (below its top directory) by path, unpacked in `scratch/tree`."""
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, spec, "-d", str(scratch)], check=True, capture_output=True)
    archive = next(scratch.glob("*.tar.gz"))
    if hashlib.sha256(archive.read_bytes()).hexdigest() != sha256:
        raise SystemExit(f"{archive.name}: sha256 differs from the row's")
    tree: dict[str, str] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                handle = tar.extractfile(member)
                if handle is not None:
                    tree[member.name.partition("/")[2]] = handle.read().decode("utf-8", "replace")
    return tree


def exact_patch(tree: dict[str, str], patch: str, scratch: Path) -> str:
    """The gold patch with the base's own line numbers (git applies a patch made on the
    repository at another offset; its `diff -U0` then says where the lines really stand)."""
    work = scratch / "tree"
    for path, text in tree.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "apply", "-"], input=patch, text=True, check=True)
    return subprocess.run([*git, "diff", "-U0"], capture_output=True, text=True, check=True).stdout


def sdist_rows(tasks: Path) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """Each row of the task file whose base is a PyPI sdist, with its `environment.source`."""
    for line in tasks.read_text().splitlines():
        row = json.loads(line)
        environment = row["environment"]
        if isinstance(environment, str):
            environment = ast.literal_eval(environment)
        source = environment.get("source", {})
        if "pypi_sdist" in source:
            yield row, source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="?", default="datasets/real_bugs.jsonl")
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--functions", type=int, default=12)
    args = parser.parse_args()
    ranks: list[int | None] = []
    picks: list[bool] = []  # per row where the issue picks a candidate: whether it is gold
    for row, source in sdist_rows(Path(args.tasks)):
        with tempfile.TemporaryDirectory(prefix="bench-localization-") as scratch:
            tree = sdist_tree(source["pypi_sdist"], source["sha256"], Path(scratch))
            gold = gold_targets(tree, exact_patch(tree, row["patch"], Path(scratch)))
        candidates, spans = candidate_locations(
            row["problem_statement"], documents_of(tree), args.files, args.functions
        )
        labels = [location.label for location in candidates]
        rank = next((labels.index(label) + 1 for label in gold if label in labels), None)
        ranks.append(rank)
        shown = rank if rank is not None else "-"
        picked = issue_choice(row["problem_statement"], candidates, spans)
        if picked is not None:
            picks.append(picked[0].label in gold)
        pick = f"; the issue picks {picked[0].label} ({picked[1]})" if picked else ""
        print(
            f"{row['instance_id']}: rank {shown} of {len(labels)}{pick} (gold: {', '.join(gold)})"
        )
    found = [rank for rank in ranks if rank is not None]
    print(
        f"rows {len(ranks)}: among the candidates {len(found)}, first {found.count(1)}, "
        f"within the {TRIED} tried {sum(rank <= TRIED for rank in found)}; the issue picks one "
        f"in {len(picks)}, the gold in {sum(picks)}"
    )


if __name__ == "__main__":
    main()
