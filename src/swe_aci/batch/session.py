"""One batch on one output directory, as `swe-aci batch` and `swe-aci compare` run it: the
directory's lock (held for the whole session), the guard against mixing configs, the run record (`run.yaml`), the log (`batch.log`), the runner with its
display and Ctrl-C handling, and the final grading of the finished instances."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from swe_aci.batch.display import display_for
from swe_aci.batch.outputs import BatchOutputs, OutputsError
from swe_aci.batch.run_record import (
    RunRecord,
    close_batch_log,
    config_record,
    open_batch_log,
    swe_aci_version,
)
from swe_aci.batch.runner import BatchOptions, BatchRunner, BatchState
from swe_aci.records import BATCH_LOG_FILE, OutputLock

if TYPE_CHECKING:
    from rich.console import Console

    from swe_aci.episode import EpisodeConfig
    from swe_aci.evaluate.options import GradingOptions
    from swe_aci.evaluate.report import InstanceReport, RunReport
    from swe_aci.tasks import Task


class SessionError(Exception):
    """The batch cannot run on this output directory (one line for the user)."""


@dataclass
class Grading:
    """The final grading of a session: where the evaluation goes and how it runs."""

    directory: Path
    options: GradingOptions
    on_done: Callable[[InstanceReport, bool], None] | None = None


@dataclass
class SessionOutcome:
    state: BatchState
    outputs: BatchOutputs
    reports: dict[str, InstanceReport] | None = None  # with grading: by instance id
    report: RunReport | None = None  # with grading: the run's report.json

    @property
    def interrupted(self) -> bool:
        return bool(self.state.stop_reason and self.state.stop_reason.startswith("interrupted"))


def run_session(
    tasks: list[Task],
    config: EpisodeConfig,
    directory: Path,
    options: BatchOptions,
    console: Console,
    record: RunRecord,
    *,
    config_name: str = "",
    grading: Grading | None = None,
    command: str = "batch",
) -> SessionOutcome:
    """Run (or resume) the batch in `directory` and, unless it was interrupted, grade it.

    `record` describes the run for `run.yaml` (command, task file, selection); `config_name`
    names the config in the message of the config guard. Raises SessionError, and
    FatalBatchError when no instance can get past a problem, OutputLockError when another process
    holds the directory (`command` names the command in that message)."""
    with OutputLock.acquire(directory, command):
        return locked_session(
            tasks, config, directory, options, console, record, config_name, grading
        )


def locked_session(
    tasks: list[Task],
    config: EpisodeConfig,
    directory: Path,
    options: BatchOptions,
    console: Console,
    record: RunRecord,
    config_name: str,
    grading: Grading | None,
) -> SessionOutcome:
    try:
        outputs = BatchOutputs(directory)
    except OutputsError as error:
        raise SessionError(str(error)) from None
    config_data, config_hash = config_record(config)
    previous = outputs.previous_config_hash()
    if previous and previous != config_hash and outputs.results and not options.redo:
        which = f"{config_name!r} config" if config_name else "config"
        raise SessionError(
            f"{directory} holds results of a different {which} (run.yaml); "
            "use another --output-dir, or --redo to run everything again"
        )
    outputs.write_run_record(
        {
            "swe_aci_version": swe_aci_version(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            **record.to_json(),
            "executor": options.executor,
            "workers": options.workers,
            "model": config.model.name,
            "config_hash": config_hash,
            "config": config_data,
        }
    )
    handler = open_batch_log(directory / BATCH_LOG_FILE)
    runner = BatchRunner(tasks, config, outputs, options)
    display = display_for(console)
    try:
        with display:
            runner.display = display
            state = runner.run()
    finally:
        close_batch_log(handler)
    outcome = SessionOutcome(state, outputs)
    if grading is not None and not outcome.interrupted:
        from swe_aci.batch.evaluation import evaluate_outputs

        graded = evaluate_outputs(
            tasks,
            outputs,
            config.env,
            grading.directory,
            grading.options,
            on_done=grading.on_done,
        )
        outcome.reports, outcome.report = graded.reports, graded.report
    return outcome
