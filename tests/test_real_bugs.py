"""datasets/real_bugs.jsonl and the held-out sets (held_out_bugs*.jsonl): upstream fixes on their
last release sdist, built from the .yaml beside each; gold resolves every row and an empty
prediction none, on bwrap and docker."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from datetime import date
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from typer.testing import CliRunner

from env_helpers import skip_unavailable
from swe_aci.cli import app
from swe_aci.tasks import Task

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
SETS = (
    "real_bugs",
    "held_out_bugs",
    "held_out_bugs_2",
    "held_out_bugs_3",
    "held_out_bugs_4",
    "held_out_bugs_5",
    "held_out_bugs_6",
    "held_out_bugs_7",
    "held_out_bugs_8",
    "held_out_bugs_9",
    "held_out_bugs_10",
)
PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@functools.cache
def dataset_verify() -> ModuleType:
    """datasets/verify.py, a script rather than a package: loaded by path, once."""
    spec = importlib.util.spec_from_file_location("dataset_verify", DATASETS / "verify.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_test_id_made_from_the_clock_is_dated() -> None:
    dated = dataset_verify().dated
    today = date(2026, 12, 7)
    assert dated("tests/test_objects.py::test_to_string[case7-2026-12-06]", today)
    assert dated("t.py::test_window[2026-01-01-2027-01-01]", today)
    assert not dated("iso8601/test_iso8601.py::test_parse_valid_date[2010-06-12-x]", today)
    assert not dated("t.py::test_bad[2026-13-45]", today)
    assert not dated("t.py::test_ids[12026-12-061]", today)


@pytest.mark.parametrize("name", ("tasks", "small_bugs", *SETS))
def test_every_listed_test_exists_tomorrow_and_none_is_unstable(name: str) -> None:
    """A test id stamped with the day it was measured, or a test on wall time, fails the gold run
    of a later day or a loaded machine (pydash's `test_to_string[case7-<date>]`, markdown2's
    `test_slow_hr`): such tests are left out of the rows."""
    dated = dataset_verify().dated
    specs = yaml.safe_load((DATASETS / f"{name}.yaml").read_text()) if name in SETS else []
    unstable = {test for spec in specs for test in spec.get("unstable_tests", {})}
    for row in rows(DATASETS / f"{name}.jsonl"):
        for test in (*row["FAIL_TO_PASS"], *row["PASS_TO_PASS"]):
            assert not dated(test, date.today()), (row["instance_id"], test)
            assert test not in unstable, (row["instance_id"], test)


@pytest.mark.parametrize("name", SETS)
def test_real_bugs_are_upstream_fixes_of_libraries_no_other_set_uses(name: str) -> None:
    specs = yaml.safe_load((DATASETS / f"{name}.yaml").read_text())
    built = rows(DATASETS / f"{name}.jsonl")
    assert [row["instance_id"] for row in built] == [spec["instance_id"] for spec in specs]
    assert len(built) >= 10
    others = ("tasks", *(other for other in SETS if other != name))
    other_repos = {row["repo"] for other in others for row in rows(DATASETS / f"{other}.jsonl")}
    for row, spec in zip(built, specs, strict=True):
        Task.model_validate(row)
        assert row["repo"] not in other_repos, row["instance_id"]
        trackers = ("github.com", "bitbucket.org")  # pyiso8601's tracker was on bitbucket then
        assert any(
            row["issue_url"].startswith(f"https://{host}/{row['repo']}/") for host in trackers
        ), row["issue_url"]
        assert all(f"github.com/{row['repo']}/commit/" in url for url in row["fix_commits"])
        assert row["FAIL_TO_PASS"], row["instance_id"]
        for key in ("patch", "test_patch"):  # the committed patch files, unchanged
            assert row[key] == (DATASETS / spec[key]["file"]).read_text()
        assert "pypi_sdist" in row["environment"]["source"]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a set's environments (11) built from a cold cache
@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("backend", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_real_bugs_gold_resolves_all_and_empty_none(
    name: str, backend: str, tmp_path: Path
) -> None:
    skip_unavailable(backend)
    instances = DATASETS / f"{name}.jsonl"
    ids = sorted(row["instance_id"] for row in rows(instances))
    empty = tmp_path / "empty.json"
    empty.write_text(
        json.dumps(
            {i: {"instance_id": i, "model_name_or_path": "test", "model_patch": ""} for i in ids}
        )
    )
    runner = CliRunner(env={**PLAIN, "SWE_ACI_CACHE": str(tmp_path / "cache")})
    for predictions, expected in (("gold", ids), (str(empty), [])):
        out = tmp_path / f"out-{predictions == 'gold'}"
        args = [predictions, "--instances", str(instances), "--env", backend, "--workers", "2"]
        result = runner.invoke(
            app, ["evaluate", *args, "--output-dir", str(out), "--timeout", "600"]
        )
        assert result.exit_code == 0, result.stderr
        report = json.loads((out / "report.json").read_text())
        assert report["resolved_ids"] == expected
        if expected:
            assert report["completed_ids"] == ids
        else:
            assert report["empty_patch_ids"] == ids
