"""How far the pipeline's template repairs reach, without the model: for each row of a task file
whose base is a PyPI sdist, the template edits of each target the gold patch changes
(`pipeline.mutations.mutants`, in the order the pipeline tries them) are run against the row's
own FAIL_TO_PASS tests, then its PASS_TO_PASS tests; a row is reached when some edit passes
both. This is the upper bound the templates give when localization and the reproduction are
right; the pipeline itself never sees these tests (they are read here, on the host, to grade).

    python bench/templates.py [datasets/real_bugs.jsonl] [--limit 60]

The tests run with this interpreter (pytest and the row's few test dependencies installed, e.g.
`pip install six freezegun`), the sdist's source on PYTHONPATH; a row whose FAIL_TO_PASS tests
pass at the base here is reported and skipped; of its PASS_TO_PASS tests, those that pass at the
base here must pass.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from localization import exact_patch, gold_targets, sdist_rows
from swe_aci.pipeline.mutations import mutants
from swe_aci.pipeline.structure import targets
from swe_aci.pipeline.templates import focus_lines

RUN_SECONDS = 20
REGION_LINES = 40  # strategy.repair.region_lines of the `local` config


def unpack_sdist(spec: str, sha256: str, scratch: Path) -> Path:
    """The whole sdist unpacked (its top directory), checked against the row's sha256."""
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, spec, "-d", str(scratch)], check=True, capture_output=True)
    archive = next(scratch.glob("*.tar.gz"))
    if hashlib.sha256(archive.read_bytes()).hexdigest() != sha256:
        raise SystemExit(f"{archive.name}: sha256 differs from the row's")
    with tarfile.open(archive) as tar:
        tar.extractall(scratch / "sdist", filter="data")
    return next((scratch / "sdist").iterdir())


def python_tree(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text(errors="replace")
        for path in root.rglob("*.py")
        if path.is_file()
    }


def passing(root: Path, tests: list[str]) -> set[str]:
    """The tests of `tests` that pass on the tree at `root` (pytest's `-rA` summary)."""
    if not tests:
        return set()
    source = root / "src" if (root / "src").is_dir() else root
    environment = {**os.environ, "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"]
    try:
        result = subprocess.run(
            [*command, "-o", "addopts=", *tests],
            cwd=root,
            env=environment,
            capture_output=True,
            text=True,
            timeout=RUN_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return set()
    return {line.split()[1] for line in result.stdout.splitlines() if line.startswith("PASSED ")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="?", default="datasets/real_bugs.jsonl")
    parser.add_argument("--limit", type=int, default=60, help="template edits per target")
    args = parser.parse_args()
    reached = rows = 0
    for row, source in sdist_rows(Path(args.tasks)):
        with tempfile.TemporaryDirectory(prefix="bench-templates-") as scratch:
            root = unpack_sdist(source["pypi_sdist"], source["sha256"], Path(scratch))
            tree = python_tree(root)
            gold = gold_targets(tree, exact_patch(tree, row["patch"], Path(scratch) / "gold"))
            subprocess.run(
                ["git", "apply", "-"], cwd=root, input=row["test_patch"], text=True, check=True
            )
            fail = row["FAIL_TO_PASS"]
            keep = sorted(passing(root, row["PASS_TO_PASS"]))
            if passing(root, fail):
                print(f"{row['instance_id']}: its tests do not fail here at its base: skipped")
                continue
            rows += 1
            started, tried, found = time.monotonic(), 0, None
            for label in gold:
                path, _, name = label.partition("::")
                text = (root / path).read_text()
                location = next(each for each in targets(path, text) if each.qualname == name)
                focus = focus_lines(row["problem_statement"], tree, location, REGION_LINES, [])
                edits = mutants(text, location, focus, args.limit, issue=row["problem_statement"])
                for rank, mutant in enumerate(edits, start=1):
                    tried += 1
                    (root / path).write_text(mutant.text)
                    try:
                        if passing(root, fail) == set(fail) and set(keep) <= passing(root, keep):
                            found = f"{label} #{rank}: {mutant.description}"
                            break
                    finally:
                        (root / path).write_text(text)
                if found:
                    break
            reached += found is not None
            spent = time.monotonic() - started
            print(
                f"{row['instance_id']}: {found or 'not reached'} "
                f"({tried} edits tried, {spent:.0f} s; gold: {', '.join(gold)})",
                flush=True,
            )
    print(f"rows {rows}: reached {reached}")


if __name__ == "__main__":
    main()
