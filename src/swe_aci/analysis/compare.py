"""Running a comparison: the same instances under each config (one batch per config), each batch's
predictions evaluated, then the comparison of `comparison.py`.

Layout: `<out>/<name>/batch/` is the config's batch output (as `swe-aci batch` writes it),
`<out>/<name>/evaluation/` its evaluation (as `swe-aci evaluate` writes it), `<out>/comparison.json`
the result. Resumable as batch and evaluate are: a finished instance is not run again and a
prediction already graded is not evaluated again, so the same command after a kill or Ctrl-C goes
on where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from swe_aci.analysis.comparison import ConfigOutcome, comparison_record, config_outcome
from swe_aci.analysis.stats import read_run
from swe_aci.batch.run_record import RunRecord
from swe_aci.batch.runner import BatchOptions
from swe_aci.batch.session import Grading, SessionError, run_session
from swe_aci.configuration import builtin_configs, resolve_config_path
from swe_aci.evaluate.options import GradingOptions
from swe_aci.evaluate.report import InstanceReport
from swe_aci.records import BATCH_DIR, COMPARISON_FILE, EVALUATION_DIR, write_json_atomic
from swe_aci.tasks import TaskSet

if TYPE_CHECKING:  # the config's model moves between modules; only its attributes are used here
    from swe_aci.episode import EpisodeConfig

OnEvaluated = Callable[[InstanceReport, bool], None]


class CompareError(Exception):
    """The comparison cannot go on (one line for the user)."""


class CompareInterrupted(Exception):
    """Ctrl-C stopped a batch; what finished is kept for the next run."""


@dataclass
class ConfigRun:
    """One config of a comparison: its output name, the config as given, the loaded config."""

    name: str
    source: str
    config: EpisodeConfig


def resolve_config(given: str) -> tuple[str, Path]:
    """(output name, YAML path) of a config given as a file or a built-in name such as `default`
    or `ablations/window_30`. A file's name is its stem; a built-in config keeps its name."""
    candidate = Path(given).expanduser()
    if candidate.is_file():
        return candidate.stem, candidate
    name = given.removesuffix(".yaml")
    builtin = builtin_configs()
    if name in builtin:
        return name, resolve_config_path(name)
    raise CompareError(
        f"unknown config {given!r}: not a YAML file, nor a built-in config ({', '.join(builtin)})"
    )


def check_distinct(runs: list[ConfigRun]) -> None:
    seen: dict[str, str] = {}
    for run in runs:
        if run.name in seen:
            raise CompareError(
                f"configs {seen[run.name]!r} and {run.source!r} would share the output "
                f"directory {run.name!r}: give each config once, under distinct file names"
            )
        seen[run.name] = run.source


def compare(
    runs: list[ConfigRun],
    task_set: TaskSet,
    output_dir: Path,
    options: GradingOptions,
    console: Console,
    record: RunRecord,
    on_evaluated: OnEvaluated | None = None,
) -> list[ConfigOutcome]:
    """Run, evaluate and compare every config; writes `<output_dir>/comparison.json`. Each
    config's batch runs with the grading's workers, redo and recipe cache.

    `record` describes the run (task file, selection, command) for each batch's run.yaml and the
    comparison file."""
    check_distinct(runs)
    ids = [task.instance_id for task in task_set.tasks]
    outcomes = []
    for number, run in enumerate(runs, start=1):
        console.rule(f"{run.name} ({number}/{len(runs)})", style="dim")
        batch_directory = output_dir / run.name / BATCH_DIR
        grading = Grading(output_dir / run.name / EVALUATION_DIR, options, on_evaluated)
        batch_options = BatchOptions(
            workers=options.workers, redo=options.redo, cache_dir=options.cache_dir
        )
        try:
            outcome = run_session(
                task_set.tasks,
                run.config,
                batch_directory,
                batch_options,
                console,
                record,
                config_name=run.source,
                grading=grading,
                command="compare",
            )
        except SessionError as error:
            raise CompareError(str(error)) from None
        if outcome.interrupted:
            raise CompareInterrupted(run.name)
        outputs, reports = outcome.outputs, outcome.reports or {}
        outcomes.append(
            config_outcome(
                run.name,
                run.source,
                run.config.model.name,
                read_run(batch_directory, ids),
                [key for key, report in reports.items() if report.resolved],
                outputs.results,
            )
        )
    comparison = comparison_record(
        outcomes,
        **record.to_json(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        instance_ids=ids,
    )
    write_json_atomic(output_dir / COMPARISON_FILE, comparison)
    return outcomes
