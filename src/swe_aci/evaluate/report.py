"""Evaluation outputs: each instance's directory and the run's `report.json`, written atomically.

`<output>/<instance_id>/` holds `patch.diff` (the prediction applied), `test_output.txt` (the test
log) and `report.json` in SWE-bench's per-instance shape (`{id: {"patch_is_None", "patch_exists",
"patch_successfully_applied", "resolved", "tests_status"}}`) with our keys beside them. The run's
`<output>/report.json` has SWE-bench's schema-2 keys plus ours.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from swe_aci.evaluate.grading import Grade, GradingMode
from swe_aci.evaluate.integrity import Integrity
from swe_aci.records import REPORT_FILE, write_json_atomic, write_text_atomic

Outcome = Literal["resolved", "unresolved", "patch_failed", "timeout", "error"]
PATCH_FILE = "patch.diff"
TEST_LOG_FILE = "test_output.txt"


class InstanceReport(BaseModel):
    """What evaluating one instance gave.

    `error` is the harness's failure (environment not built, test patch not applying, no tests to
    run), never the prediction's: a patch that does not apply is `patch_failed`, a test run stopped
    at the timeout `timeout`; both are completed and unresolved.
    """

    instance_id: str
    model_name_or_path: str = ""
    outcome: Outcome
    empty_patch: bool = False
    patch_sha256: str = ""
    message: str = ""
    tests_status: Grade | None = None
    test_exit_code: int | None = None
    timings: dict[str, float] = {}
    grading: GradingMode = "lenient"
    strict: bool = False
    integrity: Integrity = Integrity()
    # swebench's own report of a SWE-bench 5 row graded under `--grading swebench`
    swebench_report: dict[str, Any] | None = None

    @property
    def resolved(self) -> bool:
        return self.outcome == "resolved"

    @property
    def completed(self) -> bool:
        return self.outcome != "error"

    def counts(self) -> dict[str, int]:
        grade = self.tests_status
        if grade is None:
            return {}
        return {
            "FAIL_TO_PASS_passed": len(grade.FAIL_TO_PASS.success),
            "FAIL_TO_PASS_total": len(grade.FAIL_TO_PASS.success) + len(grade.FAIL_TO_PASS.failure),
            "PASS_TO_PASS_kept": len(grade.PASS_TO_PASS.success),
            "PASS_TO_PASS_total": len(grade.PASS_TO_PASS.success) + len(grade.PASS_TO_PASS.failure),
        }

    def to_json(self) -> dict[str, Any]:
        """SWE-bench's per-instance report, with ours inside."""
        ours = self.model_dump(mode="json", exclude={"tests_status"})
        swebench: dict[str, Any] = {
            "patch_is_None": False,
            "patch_exists": not self.empty_patch,
            "patch_successfully_applied": self.outcome in ("resolved", "unresolved", "timeout"),
            "resolved": self.resolved,
        }
        if self.tests_status is not None:
            swebench["tests_status"] = {
                **self.tests_status.model_dump(mode="json"),
                "FAIL_TO_FAIL": {"success": [], "failure": []},
                "PASS_TO_FAIL": {"success": [], "failure": []},
            }
        return {self.instance_id: {**swebench, **ours, "test_counts": self.counts()}}

    @classmethod
    def from_json(cls, data: dict[str, Any], instance_id: str) -> InstanceReport:
        entry = dict(data[instance_id])
        status = entry.get("tests_status")
        if status is not None:
            entry["tests_status"] = {key: status[key] for key in ("FAIL_TO_PASS", "PASS_TO_PASS")}
        return cls.model_validate(entry)


def patch_digest(patch: str) -> str:
    return hashlib.sha256(patch.encode("utf-8")).hexdigest()


def instance_dir(output_dir: Path, instance_id: str) -> Path:
    return output_dir / instance_id


def save_instance(output_dir: Path, report: InstanceReport, patch: str, test_log: str) -> None:
    """Write the instance's patch, test log and report (the report last: it marks completion)."""
    directory = instance_dir(output_dir, report.instance_id)
    write_text_atomic(directory / PATCH_FILE, patch)
    write_text_atomic(directory / TEST_LOG_FILE, test_log)
    write_json_atomic(directory / REPORT_FILE, report.to_json())


def load_instance(output_dir: Path, instance_id: str) -> InstanceReport | None:
    """The saved report of an instance, or None when there is none (or it is unreadable)."""
    path = instance_dir(output_dir, instance_id) / REPORT_FILE
    try:
        return InstanceReport.from_json(json.loads(path.read_text()), instance_id)
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None


def run_report(
    instance_ids: Iterable[str],
    submitted_ids: Iterable[str],
    empty_patch_ids: Iterable[str],
    reports: dict[str, InstanceReport],
    *,
    grading: GradingMode = "lenient",
    strict: bool = False,
) -> dict[str, Any]:
    """The run's report.json: SWE-bench's schema-2 keys with SWE-bench's meaning, then ours.

    As in SWE-bench, an empty prediction is in `empty_patch_ids` only: not completed, resolved or
    unresolved. We grade it all the same (its tests must fail at the base); that outcome is under
    our own key, `empty_patch_outcomes`. `integrity_flagged_ids`
    are the instances whose prediction changes files that can change how the tests run (see
    `integrity.py`); `resolved_with_integrity_flags` counts the resolved ones among them (none with
    `strict`, which grades them unresolved: `strict_unresolved_ids`).
    """
    all_ids = sorted(instance_ids)
    submitted = sorted(set(submitted_ids) & set(all_ids))
    empty = sorted(set(empty_patch_ids) & set(all_ids))
    graded = {i: report for i, report in reports.items() if i not in set(empty)}
    by_outcome: dict[str, list[str]] = {}
    for instance_id in sorted(graded):
        by_outcome.setdefault(graded[instance_id].outcome, []).append(instance_id)
    completed = sorted(i for i, report in graded.items() if report.completed)
    resolved = by_outcome.get("resolved", [])
    unresolved = sorted(set(completed) - set(resolved))
    errors = by_outcome.get("error", [])
    incomplete = sorted(set(all_ids) - set(completed) - set(errors) - set(empty))
    flagged = sorted(i for i, report in reports.items() if report.integrity.is_flagged)
    return {
        "total_instances": len(all_ids),
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": completed,
        "incomplete_ids": incomplete,
        "empty_patch_ids": empty,
        "submitted_ids": submitted,
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": errors,
        "schema_version": 2,
        "patch_failed_ids": by_outcome.get("patch_failed", []),
        "timeout_ids": by_outcome.get("timeout", []),
        "grading": grading,
        "strict": strict,
        "integrity_flagged_ids": flagged,
        "resolved_with_integrity_flags": len(set(flagged) & set(resolved)),
        "strict_unresolved_ids": sorted(
            i for i, report in reports.items() if report.integrity.strict_unresolved
        ),
        "empty_patch_outcomes": {i: reports[i].outcome for i in empty if i in reports},
        "instances": {
            instance_id: {
                "outcome": report.outcome,
                "message": report.message,
                **report.counts(),
                "timings": report.timings,
                "integrity_flags": len(report.integrity.flagged),
            }
            for instance_id, report in sorted(reports.items())
        },
    }
