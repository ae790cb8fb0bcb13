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

Outcome = Literal["resolved", "unresolved", "patch_failed", "timeout", "error", "empty_patch"]
# Our keys of a report written only when they differ from these defaults (older reports lack
# them): the outcome of an empty patch's tests, and what several runs (`--runs`) gave.
OPTIONAL_DEFAULTS: dict[str, Any] = {
    "base_outcome": None,
    "runs": 1,
    "run_outcomes": [],
    "flaky_tests": [],
}
PATCH_FILE = "patch.diff"
TEST_LOG_FILE = "test_output.txt"


class InstanceReport(BaseModel):
    """What evaluating one instance gave.

    `error` is the harness's failure (environment not built, test patch not applying, no tests to
    run), never the prediction's: a patch that does not apply is `patch_failed`, a test run stopped
    at the timeout `timeout`; both are completed and unresolved. An empty prediction is
    `empty_patch`, as the run's totals count it (SWE-bench's meaning); its tests are run all the
    same, and what they gave at the base is `base_outcome`.
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
    base_outcome: Outcome | None = None
    runs: int = 1
    run_outcomes: list[Outcome] = []
    flaky_tests: list[str] = []
    # swebench's own report of a SWE-bench 5 row graded under `--grading swebench`
    swebench_report: dict[str, Any] | None = None

    @property
    def resolved(self) -> bool:
        return self.outcome == "resolved"

    @property
    def flaky(self) -> bool:
        """Several runs disagreed: on a graded test, or on the outcome."""
        return bool(self.flaky_tests) or len(set(self.run_outcomes)) > 1

    @property
    def completed(self) -> bool:
        return (self.base_outcome or self.outcome) != "error"

    def record_verdict(self, broken: str | None) -> None:
        """The outcome of the graded tests (`tests_status`, set): `error` when the run was broken
        (`broken`: why), else resolved or unresolved; under `strict` a resolved prediction with
        integrity flags is unresolved (`integrity.strict_unresolved`), the message naming the
        flagged paths."""
        assert self.tests_status is not None
        if broken is not None:
            self.outcome = "error"
            self.message = broken
        elif not self.tests_status.resolved:
            self.outcome = "unresolved"
        elif self.strict and self.integrity.is_flagged:
            self.outcome = "unresolved"
            self.integrity.strict_unresolved = True
            paths = ", ".join(flag.path for flag in self.integrity.flagged)
            self.message = (
                f"strict: the prediction changes files that can change the tests: {paths}"
            )
        else:
            self.outcome = "resolved"

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
        unset = {key for key, default in OPTIONAL_DEFAULTS.items() if getattr(self, key) == default}
        ours = self.model_dump(mode="json", exclude={"tests_status", *unset})
        applied = (self.base_outcome or self.outcome) in ("resolved", "unresolved", "timeout")
        swebench: dict[str, Any] = {
            "patch_is_None": False,
            "patch_exists": not self.empty_patch,
            "patch_successfully_applied": applied,
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
    except (OSError, ValueError, KeyError, TypeError, ValidationError, RecursionError):
        return None


class RunReport(BaseModel):
    """The run's report.json: SWE-bench's schema-2 keys with SWE-bench's meaning, then ours (see
    `run_report`). `instances` is each graded instance's summary (outcome, message, test counts,
    timings, integrity flags). `to_json` is the file's content, key for key in this order."""

    total_instances: int
    submitted_instances: int
    completed_instances: int
    resolved_instances: int
    unresolved_instances: int
    empty_patch_instances: int
    error_instances: int
    completed_ids: list[str]
    incomplete_ids: list[str]
    empty_patch_ids: list[str]
    submitted_ids: list[str]
    resolved_ids: list[str]
    unresolved_ids: list[str]
    error_ids: list[str]
    schema_version: int = 2
    patch_failed_ids: list[str]
    timeout_ids: list[str]
    grading: GradingMode
    strict: bool
    integrity_flagged_ids: list[str]
    resolved_with_integrity_flags: int
    strict_unresolved_ids: list[str]
    empty_patch_outcomes: dict[str, Outcome]
    instances: dict[str, dict[str, Any]]
    # with `--runs N` above 1 only (absent otherwise, so one run's report is as it always was)
    runs: int | None = None
    flaky_ids: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        optional = {key for key in ("runs", "flaky_ids") if getattr(self, key) is None}
        return self.model_dump(mode="json", exclude=optional)


def run_report(
    instance_ids: Iterable[str],
    submitted_ids: Iterable[str],
    empty_patch_ids: Iterable[str],
    reports: dict[str, InstanceReport],
    *,
    grading: GradingMode = "lenient",
    strict: bool = False,
) -> RunReport:
    """The run's report.json: SWE-bench's schema-2 keys with SWE-bench's meaning, then ours.

    As in SWE-bench, an empty prediction is in `empty_patch_ids` only: not completed, resolved or
    unresolved (its own outcome is `empty_patch`). We grade it all the same (its tests must fail at
    the base); what that gave is under our own key, `empty_patch_outcomes`. `integrity_flagged_ids`
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
    return RunReport.model_validate(
        {
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
            "empty_patch_outcomes": {
                i: reports[i].base_outcome or reports[i].outcome for i in empty if i in reports
            },
            "instances": {
                instance_id: {
                    "outcome": report.outcome,
                    "message": report.message,
                    **report.counts(),
                    "timings": report.timings,
                    "integrity_flags": len(report.integrity.flagged),
                    **({"flaky_tests": report.flaky_tests} if report.flaky else {}),
                }
                for instance_id, report in sorted(reports.items())
            },
            **_runs_keys(reports),
        }
    )


def _runs_keys(reports: dict[str, InstanceReport]) -> dict[str, Any]:
    """`runs` and `flaky_ids` (the instances whose runs disagreed), when `--runs` was above 1."""
    runs = max((report.runs for report in reports.values()), default=1)
    if runs == 1:
        return {}
    return {"runs": runs, "flaky_ids": sorted(i for i, r in reports.items() if r.flaky)}
