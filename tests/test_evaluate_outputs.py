"""Reading predictions and writing reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_aci.env.diff import patch_paths
from swe_aci.evaluate.grading import Grade, TestResults
from swe_aci.evaluate.predictions import PredictionsError, read_predictions
from swe_aci.evaluate.report import (
    InstanceReport,
    load_instance,
    run_report,
    save_instance,
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_preds_json_by_id_with_empty_and_missing_patches(tmp_path: Path) -> None:
    preds = {
        "a__a-1": {"instance_id": "a__a-1", "model_name_or_path": "m", "model_patch": "diff"},
        "b__b-2": {"instance_id": "b__b-2", "model_name_or_path": "m", "model_patch": None},
        "c__c-3": {"model_name_or_path": "m"},
    }
    predictions = read_predictions(write(tmp_path, "preds.json", json.dumps(preds)))
    assert sorted(predictions) == ["a__a-1", "b__b-2", "c__c-3"]
    assert not predictions["a__a-1"].is_empty
    assert predictions["b__b-2"].is_empty and predictions["c__c-3"].is_empty


def test_jsonl_and_list(tmp_path: Path) -> None:
    lines = [{"instance_id": "x-1", "model_patch": "p"}, {"instance_id": "x-2", "model_patch": ""}]
    jsonl = write(tmp_path, "preds.jsonl", "\n".join(json.dumps(row) for row in lines) + "\n\n")
    assert sorted(read_predictions(jsonl)) == ["x-1", "x-2"]
    single = write(tmp_path, "one.jsonl", json.dumps(lines[0]) + "\n")
    assert list(read_predictions(single)) == ["x-1"]
    as_list = write(tmp_path, "list.json", json.dumps(lines))
    assert read_predictions(as_list)["x-1"].model_patch == "p"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is not json\n", "is neither JSON nor JSON lines"),
        ('{"instance_id": "x"}\nnot json\n', "line 2 is not JSON"),
        ("", "empty file"),
        ("42", "expected an object by instance id"),
        ('[{"model_patch": "p"}]', "prediction #0: instance_id: Field required"),
        ('{"x": {"model_patch": 3}}', "prediction 'x': model_patch"),
    ],
)
def test_bad_predictions_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(PredictionsError, match=message) as caught:
        read_predictions(write(tmp_path, "preds.json", text))
    assert "\n" not in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PredictionsError, match="cannot read predictions"):
        read_predictions(tmp_path / "absent.json")


def graded(f2p_ok: bool) -> Grade:
    return Grade(
        FAIL_TO_PASS=TestResults(success=["t1"]) if f2p_ok else TestResults(failure=["t1"]),
        PASS_TO_PASS=TestResults(success=["t2", "t3"]),
    )


def test_instance_report_round_trip_in_swebench_shape(tmp_path: Path) -> None:
    report = InstanceReport(
        instance_id="a-1",
        model_name_or_path="m",
        outcome="resolved",
        tests_status=graded(True),
        timings={"tests": 1.5},
    )
    save_instance(tmp_path, report, "the patch", "the log")
    saved = json.loads((tmp_path / "a-1" / "report.json").read_text())
    entry = saved["a-1"]
    assert entry["resolved"] is True and entry["patch_successfully_applied"] is True
    assert entry["tests_status"]["FAIL_TO_PASS"] == {"success": ["t1"], "failure": []}
    assert entry["test_counts"]["PASS_TO_PASS_kept"] == 2
    assert (tmp_path / "a-1" / "patch.diff").read_text() == "the patch"
    assert (tmp_path / "a-1" / "test_output.txt").read_text() == "the log"
    assert load_instance(tmp_path, "a-1") == report
    assert load_instance(tmp_path, "absent") is None
    (tmp_path / "a-1" / "report.json").write_text("{")
    assert load_instance(tmp_path, "a-1") is None
    assert not list(tmp_path.glob("a-1/.*"))  # no temporary files left


def test_run_report_schema_2_and_ours() -> None:
    reports = {
        "r": InstanceReport(instance_id="r", outcome="resolved", tests_status=graded(True)),
        "u": InstanceReport(instance_id="u", outcome="unresolved", tests_status=graded(False)),
        "p": InstanceReport(instance_id="p", outcome="patch_failed"),
        "t": InstanceReport(instance_id="t", outcome="timeout"),
        "e": InstanceReport(instance_id="e", outcome="error", message="no daemon"),
        "z": InstanceReport(
            instance_id="z", outcome="empty_patch", base_outcome="unresolved", empty_patch=True
        ),
    }
    typed = run_report(
        ["r", "u", "p", "t", "e", "z", "n"], ["r", "u", "p", "t", "e", "z", "?"], ["z"], reports
    )
    assert typed.resolved_ids == ["r"] and typed.empty_patch_outcomes == {"z": "unresolved"}
    report = typed.to_json()  # report.json's content, its keys in the file's order
    assert list(report) == [
        *("total_instances", "submitted_instances", "completed_instances", "resolved_instances"),
        *("unresolved_instances", "empty_patch_instances", "error_instances", "completed_ids"),
        *("incomplete_ids", "empty_patch_ids", "submitted_ids", "resolved_ids", "unresolved_ids"),
        *("error_ids", "schema_version", "patch_failed_ids", "timeout_ids", "grading", "strict"),
        *("integrity_flagged_ids", "resolved_with_integrity_flags", "strict_unresolved_ids"),
        *("empty_patch_outcomes", "instances"),
    ]
    assert report["schema_version"] == 2
    assert report["total_instances"] == 7
    assert report["submitted_ids"] == ["e", "p", "r", "t", "u", "z"]
    # SWE-bench's keys keep SWE-bench's meaning: an empty patch is in empty_patch_ids only
    assert report["completed_ids"] == ["p", "r", "t", "u"]
    assert report["resolved_ids"] == ["r"]
    assert report["unresolved_ids"] == ["p", "t", "u"]
    assert report["error_ids"] == ["e"]
    assert report["incomplete_ids"] == ["n"]
    assert report["empty_patch_ids"] == ["z"]
    assert report["completed_instances"] == 4 and report["empty_patch_instances"] == 1
    assert report["empty_patch_outcomes"] == {"z": "unresolved"}  # graded all the same
    assert report["instances"]["z"]["outcome"] == "empty_patch"
    assert report["patch_failed_ids"] == ["p"] and report["timeout_ids"] == ["t"]
    assert report["instances"]["e"]["message"] == "no daemon"
    assert report["instances"]["r"]["FAIL_TO_PASS_passed"] == 1


def test_patch_paths_reads_every_patch_form() -> None:
    """Plain unified diffs (the shipped rows' test patches), git diffs, new and deleted files,
    renames; a removed line reading `-- x` inside a hunk is no file."""
    plain = "--- a/tests/t.py\t2024-01-01\n+++ b/tests/t.py\n@@ -1,2 +1,2 @@\n--- x\n kept\n+++ y\n"
    git = (
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n"
        "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
    )
    assert patch_paths(plain) == ["tests/t.py"]
    assert patch_paths(git) == ["new.py", "old.py", "a.py", "b.py"]


def test_grading_a_run_is_called_from_one_place() -> None:
    """`evaluate`, `batch --evaluate` and `compare` grade through `grade_run`: nothing else calls
    the evaluation pool or builds the run report."""
    import ast

    source = Path(__file__).resolve().parents[1] / "src" / "swe_aci"
    callers: dict[str, set[str]] = {"evaluate_all": set(), "run_report": set(), "grade_run": set()}
    for path in source.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in callers:
                    callers[name].add(str(path.relative_to(source)))
    assert callers["evaluate_all"] == {"evaluate/run_grading.py"}
    assert callers["run_report"] == {"evaluate/run_grading.py"}
    assert callers["grade_run"] == {"cli/evaluate.py", "batch/evaluation.py"}
