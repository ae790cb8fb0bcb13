"""Build tasks.jsonl from specs.yaml: cut each fix out of its release pair and measure its tests.

    python datasets/build_tasks.py [--ids ID ...]

For each spec of a Python sdist: fetch the release before the fix (`base`) and the release with it (`fixed`), take
the listed hunks of their diff as `patch` and `test_patch` (or either written out: `{file: PATH}`
relative to this directory, or the patch text itself; a spec whose patches are both written out,
e.g. upstream's fix commit, needs no `fixed`), and measure FAIL_TO_PASS / PASS_TO_PASS by
running `test_cmd` at the base and with the gold patch, exactly as verify.py does; a spec's
`unstable_tests` (test id: why) are left out of both lists. Rows of specs not selected with --ids are kept as they are.

A spec with a `source` of another kind (`npm: name@version` or `debian: name=version`, with its
`sha256`), its `toolchains` and `log_parser`, has both patches written out; its tests are measured
by swe-aci's own harness (`--env`: bwrap by default), the same runs `evaluate` makes, and read
with the row's log parser.
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


def build_row(spec: dict, cache: Path, work: Path, backend: str) -> dict:
    if "source" in spec:
        return build_other_row(spec, work, backend)
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
    unstable = spec.get("unstable_tests", {})
    row["FAIL_TO_PASS"] = [t for t in outcome.f2p if t not in unstable]
    row["PASS_TO_PASS"] = [t for t in outcome.p2p if t not in unstable]
    print(
        f"built {row['instance_id']}: F2P={len(row['FAIL_TO_PASS'])} "
        f"P2P={len(row['PASS_TO_PASS'])}",
        flush=True,
    )
    return row


def written_patches(spec: dict) -> dict:
    return {key: (HERE / spec[key]["file"]).read_text() for key in ("patch", "test_patch")}


def build_other_row(spec: dict, work: Path, backend: str) -> dict:
    """A row of a non-Python source: FAIL_TO_PASS / PASS_TO_PASS are the tests the harness's
    runs with the gold patch and with none (both with `test_patch`) tell apart."""
    from swe_aci.env.config import EnvConfig
    from swe_aci.evaluate.harness import evaluate_instance
    from swe_aci.evaluate.options import GradingOptions
    from swe_aci.evaluate.parsers import TestStatus, parse_log
    from swe_aci.evaluate.report import TEST_LOG_FILE, instance_dir
    from swe_aci.tasks import Task

    row = {key: spec[key] for key in ROW_KEYS if key in spec} | written_patches(spec)
    environment = {"source": spec["source"], "toolchains": spec["toolchains"]}
    for key in ("revert", "prepare", "install", "exclude", "test_cmd", "log_parser"):
        if key in spec:
            environment[key] = spec[key]
    row["environment"] = environment
    probe = Task.model_validate({**row, "FAIL_TO_PASS": ["(measuring)"]})
    config = EnvConfig(backend=backend)
    statuses = {}
    for name, patch in (("gold", row["patch"]), ("base", "")):
        report = evaluate_instance(probe, patch, config, work / name, GradingOptions(900))
        log = (instance_dir(work / name, probe.instance_id) / TEST_LOG_FILE).read_text()
        if report.tests_status is None:
            raise TaskError(f"the {name} run did not test: {report.message}")
        statuses[name] = parse_log(environment["log_parser"], log)
    passed = {TestStatus.PASSED, TestStatus.XFAIL}
    after, before = statuses["gold"], statuses["base"]
    row["FAIL_TO_PASS"] = sorted(
        t for t, s in after.items() if s in passed and before.get(t) not in passed
    )
    row["PASS_TO_PASS"] = sorted(
        t for t, s in after.items() if s in passed and before.get(t) in passed
    )
    if not row["FAIL_TO_PASS"]:
        raise TaskError("no test fails at the base and passes with the fix")
    print(
        f"built {row['instance_id']}: F2P={len(row['FAIL_TO_PASS'])} "
        f"P2P={len(row['PASS_TO_PASS'])}",
        flush=True,
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="*")
    parser.add_argument("--specs", type=Path, default=HERE / "specs.yaml")
    parser.add_argument("--out", type=Path, default=HERE / "tasks.jsonl")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--env", default="bwrap", help="the backend measuring non-Python rows")
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
                rows.append(build_row(spec, args.cache_dir, Path(tmp), args.env))
            except TaskError as error:
                print(f"FAILED {instance_id}: {error}", file=sys.stderr)
                return 1
    partial = args.out.with_suffix(".part")
    partial.write_text("".join(json.dumps(row) + "\n" for row in rows))
    partial.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
