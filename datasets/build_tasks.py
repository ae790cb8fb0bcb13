"""Build tasks.jsonl from specs.yaml: cut each fix out of its release pair and measure its tests.

    python datasets/build_tasks.py [--ids ID ...]

For each spec: fetch the release before the fix (`base`) and the release with it (`fixed`), take
the listed hunks of their diff as `patch` and `test_patch` (or either written out: `{file: PATH}`
relative to this directory, or the patch text itself; a spec whose patches are both written out,
e.g. upstream's fix commit, needs no `fixed`), and measure FAIL_TO_PASS / PASS_TO_PASS by
running `test_cmd` at the base and with the gold patch, exactly as verify.py does. Rows of specs not selected with --ids are kept as they are.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml
from hunks import file_diffs, renumber
from verify import DEFAULT_CACHE, TaskError, fetch_sdist, unpack, verify

HERE = Path(__file__).parent
ROW_KEYS = (
    "instance_id",
    "repo",
    "problem_statement",
    "version",
    "created_at",
    "issue_url",
    "fix_commits",
)


def cut(diffs: dict[str, tuple[str, list[str]]], selections: list[str]) -> str:
    patch = ""
    for selection in selections:
        path, _, numbers = selection.partition(":")
        header, hunks = diffs[path]
        chosen = [int(n) for n in numbers.split(",")] if numbers else range(1, len(hunks) + 1)
        patch += header + renumber([hunks[n - 1] for n in chosen])
    return patch


def build_row(spec: dict, cache: Path, work: Path) -> dict:
    diffs = {}
    if "fixed" in spec:  # hunks are cut from the release pair; without it both patches are files
        old, new = work / "old", work / "new"
        unpack(fetch_sdist(spec["base"]["sdist"], spec["base"]["sha256"], cache), old)
        unpack(fetch_sdist(spec["fixed"]["sdist"], spec["fixed"]["sha256"], cache), new)
        diffs = file_diffs(old, new)
    row = {key: spec[key] for key in ROW_KEYS if key in spec}
    for key in ("patch", "test_patch"):
        value = spec[key]
        if isinstance(value, list):
            row[key] = cut(diffs, value)
        elif isinstance(value, dict):
            row[key] = (HERE / value["file"]).read_text()
        else:
            row[key] = value
    environment = {
        "python": spec["python"],
        "source": {"pypi_sdist": spec["base"]["sdist"], "sha256": spec["base"]["sha256"]},
    }
    for key in ("revert", "prepare", "install", "exclude", "test_cmd"):
        if key in spec:
            environment[key] = spec[key]
    environment["log_parser"] = "pytest"
    row["environment"] = environment
    with tempfile.TemporaryDirectory(prefix="swe-aci-measure-") as tmp:
        outcome = verify(row, cache, Path(tmp), measure=True)
    if outcome.problems or not outcome.f2p:
        raise TaskError(
            "; ".join(outcome.problems) or "no test fails at the base and passes with the fix"
        )
    row["FAIL_TO_PASS"], row["PASS_TO_PASS"] = outcome.f2p, outcome.p2p
    print(f"built {row['instance_id']}: F2P={len(outcome.f2p)} P2P={len(outcome.p2p)}", flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="*")
    parser.add_argument("--specs", type=Path, default=HERE / "specs.yaml")
    parser.add_argument("--out", type=Path, default=HERE / "tasks.jsonl")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()

    specs = yaml.safe_load(args.specs.read_text())
    existing = {}
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            row = json.loads(line)
            existing[row["instance_id"]] = row
    rows = []
    for spec in specs:
        instance_id = spec["instance_id"]
        if args.ids is not None and instance_id not in args.ids:
            if instance_id in existing:
                rows.append(existing[instance_id])
            continue
        with tempfile.TemporaryDirectory(prefix="swe-aci-build-") as tmp:
            try:
                rows.append(build_row(spec, args.cache_dir, Path(tmp)))
            except TaskError as error:
                print(f"FAILED {instance_id}: {error}", file=sys.stderr)
                return 1
    partial = args.out.with_suffix(".part")
    partial.write_text("".join(json.dumps(row) + "\n" for row in rows))
    partial.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
