"""Grading a run: each chosen prediction graded (or its saved report reused) and the run's
`report.json` written. The one way `swe-aci evaluate`, `batch --evaluate` and `compare` grade a
set of predictions."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from swe_aci.env.config import EnvConfig
from swe_aci.evaluate.harness import evaluate_all
from swe_aci.evaluate.options import GradingOptions
from swe_aci.evaluate.report import InstanceReport, RunReport, run_report
from swe_aci.records import REPORT_FILE, Prediction, write_json_atomic
from swe_aci.tasks import Task


@dataclass
class RunGrading:
    """What grading a run gave: each graded instance's report, by id, and the run's report."""

    reports: dict[str, InstanceReport]
    report: RunReport


def grade_run(
    tasks: Iterable[Task],
    predictions: dict[str, Prediction],
    env_config: EnvConfig,
    directory: Path,
    options: GradingOptions,
    *,
    on_done: Callable[[InstanceReport, bool], None] | None = None,
    graded: dict[str, InstanceReport] | None = None,
) -> RunGrading:
    """Grade the `predictions` of `tasks` into `directory` (per-instance directories, as
    `evaluate_all` writes them) and write the run's `report.json` there, over every task (those
    without a prediction are not evaluated). `graded`: reports the caller already holds (a
    batch's workers'), taken as they are."""
    tasks = list(tasks)
    reports = evaluate_all(
        tasks, predictions, env_config, directory, options, on_done=on_done, graded=graded
    )
    report = run_report(
        [task.instance_id for task in tasks],
        predictions,
        [key for key, prediction in predictions.items() if prediction.is_empty],
        reports,
        grading=options.mode,
        strict=options.strict,
    )
    write_json_atomic(directory / REPORT_FILE, report.to_json())
    return RunGrading(reports, report)
