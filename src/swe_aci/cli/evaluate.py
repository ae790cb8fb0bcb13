"""`swe-aci evaluate`: grade predictions by running each task's tests, with a progress display."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_aci.cli.common import (
    EVALUATION_TIMEOUT,
    DatasetOption,
    EnvOption,
    EvaluationTimeoutOption,
    SplitOption,
    TaskSourceOption,
    WorkersOption,
    check_backend,
    fail,
    guarded,
    shown,
)

if TYPE_CHECKING:
    from rich.console import Console

    from swe_aci.env.config import EnvConfig
    from swe_aci.evaluate.options import GradingOptions
    from swe_aci.evaluate.report import InstanceReport, RunReport
    from swe_aci.records import Prediction
    from swe_aci.tasks import Task

OUTCOME_STYLE = {
    "resolved": "green",
    "unresolved": "yellow",
    "patch_failed": "magenta",
    "timeout": "red",
    "error": "bold red",
    "empty_patch": "dim",
}


def evaluate_command(
    predictions: Annotated[
        str,
        typer.Argument(
            help="preds.json (by id), a JSON list or JSONL; `gold`: each task's patch "
            "(a file named gold: ./gold)."
        ),
    ],
    instances: TaskSourceOption,
    dataset: DatasetOption = None,
    split: SplitOption = None,
    ids: Annotated[
        list[str] | None, typer.Option(help="Only these instance ids (repeat, or comma-separated).")
    ] = None,
    workers: WorkersOption = 1,
    env: EnvOption = None,
    output_dir: Annotated[
        Path, typer.Option(help="Per-instance logs and reports, and report.json.")
    ] = Path("evaluation"),
    timeout: EvaluationTimeoutOption = EVALUATION_TIMEOUT,
    redo: Annotated[
        bool, typer.Option(help="Evaluate again instances that have a report.")
    ] = False,
    grading: Annotated[
        str,
        typer.Option(
            help="Id rules: lenient (ours, the default) or swebench (the swebench package's "
            "parsers and matching exactly, comparable with the leaderboard; "
            "pip install 'swe-aci[swebench]')."
        ),
    ] = "lenient",
    strict: Annotated[
        bool,
        typer.Option(
            help="Grade unresolved a prediction that changes files that can change how the "
            "tests run (conftest.py, test config, files under test directories...)."
        ),
    ] = False,
    runs: Annotated[
        int,
        typer.Option(
            min=1,
            max=20,
            help="Evaluate each instance this many times, each in a fresh environment; an "
            "instance whose FAIL_TO_PASS or PASS_TO_PASS results differ between runs is flaky.",
        ),
    ] = 1,
) -> None:
    """Run each instance's tests with its predicted patch applied; report % resolved."""

    def body() -> None:
        from pydantic import ValidationError
        from rich.console import Console

        from swe_aci.env.config import EnvConfig
        from swe_aci.evaluate.grading import GRADING_MODES
        from swe_aci.evaluate.options import GradingOptions
        from swe_aci.evaluate.predictions import PredictionsError
        from swe_aci.records import REPORT_FILE, OutputLock, OutputLockError
        from swe_aci.tasks import TaskFileError

        console = Console(stderr=True, highlight=False, soft_wrap=True)
        try:
            env_config = EnvConfig(backend=env or "auto")  # type: ignore[arg-type]
        except ValidationError:
            fail(f"unknown sandbox {env!r}: use auto, local, bwrap or docker")
        if grading not in GRADING_MODES:
            fail(f"unknown --grading {grading!r}: use {' or '.join(GRADING_MODES)}")
        if grading == "swebench":
            from swe_aci.evaluate.grading import SwebenchMissingError, swebench_log_parsers

            try:
                swebench_log_parsers()
            except SwebenchMissingError as exc:
                fail(str(exc))
        try:
            tasks = selected_tasks(instances, ids, console, dataset=dataset, split=split)
            chosen = read_chosen_predictions(predictions, tasks, instances, console)
        except (TaskFileError, PredictionsError) as exc:
            fail(str(exc))
        check_backend(env_config)
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"cannot create the output directory {output_dir}: {exc.strerror}")
        try:
            lock = OutputLock.acquire(output_dir, "evaluate")
        except OutputLockError as exc:
            fail(str(exc))
        options = GradingOptions(
            timeout,
            workers=workers,
            redo=redo,
            mode=grading,  # type: ignore[arg-type]  # checked above
            strict=strict,
            runs=runs,
        )
        with lock:
            report = run_with_progress(tasks, chosen, env_config, options, console)
        print_summary(report, console)
        console.print(f"report: {shown(output_dir / REPORT_FILE)}")

    def run_with_progress(
        tasks: list[Task],
        chosen: dict[str, Prediction],
        env_config: EnvConfig,
        options: GradingOptions,
        console: Console,
    ) -> RunReport:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        from swe_aci.evaluate.run_grading import grade_run

        todo = sum(1 for task in tasks if task.instance_id in chosen)
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress:
            bar = progress.add_task("evaluating", total=todo)

            def done(report: InstanceReport, reused: bool) -> None:
                note = " (report kept; --redo evaluates again)" if reused else ""
                progress.console.print(outcome_line(report, note))
                progress.advance(bar)

            return grade_run(tasks, chosen, env_config, output_dir, options, on_done=done).report

    guarded(body, interrupted="evaluated instances keep their reports: run again to go on")


def selected_tasks(
    instances: str,
    ids: list[str] | None,
    console: Console,
    *,
    dataset: str | None = None,
    split: str | None = None,
) -> list[Task]:
    """The task file's valid rows (bad ones reported, one line each), limited to `ids`."""

    from swe_aci.tasks import load_tasks

    task_set = load_tasks(instances, dataset=dataset, split=split)
    for problem in task_set.problems:
        console.print(f"[yellow]skipped row:[/] {shown(problem)}")
    tasks = task_set.tasks
    if ids:
        wanted = {part.strip() for value in ids for part in value.split(",") if part.strip()}
        known = {task.instance_id for task in tasks}
        if unknown := sorted(wanted - known):
            console.print(
                f"[yellow]--ids not in {shown(instances)}:[/] {shown(', '.join(unknown))}"
            )
        tasks = [task for task in tasks if task.instance_id in wanted]
    return tasks


def read_chosen_predictions(
    source: str, tasks: list[Task], instances: str, console: Console
) -> dict[str, Prediction]:
    """The predictions of the selected tasks; predictions for ids the task file lacks are listed
    and skipped."""

    from swe_aci.evaluate.predictions import GOLD, gold_predictions, read_predictions

    if source == GOLD:  # the keyword, even when a file or directory is named so: ./gold is that
        return gold_predictions({task.instance_id: task.patch or "" for task in tasks})
    predictions = read_predictions(Path(source))
    known = {task.instance_id for task in tasks}
    if unknown := sorted(set(predictions) - known):
        console.print(
            f"[yellow]{len(unknown)} prediction(s) for ids not in {shown(instances)} "
            f"(or not selected), skipped:[/] {shown(', '.join(unknown))}"
        )
    return {key: value for key, value in predictions.items() if key in known}


def outcome_line(report: InstanceReport, note: str) -> str:
    """One evaluated instance as `evaluate` and `compare` print it (rich markup)."""

    style = OUTCOME_STYLE[report.outcome]
    detail = f": {shown(report.message)}" if report.message else ""
    return f"[{style}]{report.outcome:>12}[/] {shown(report.instance_id)}{detail}{note}"


def print_summary(report: RunReport, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    total, submitted = report.total_instances, report.submitted_instances
    resolved = report.resolved_instances
    table = Table(title="evaluation")
    table.add_column("instances")
    table.add_column("count", justify="right")
    rows = [
        ("total", total),
        ("submitted", submitted),
        ("completed", report.completed_instances),
        ("resolved", resolved),
        ("  of which with integrity flags", report.resolved_with_integrity_flags),
        ("unresolved", report.unresolved_instances),
        ("  of which patch failed", len(report.patch_failed_ids)),
        ("  of which timed out", len(report.timeout_ids)),
        ("empty patch", report.empty_patch_instances),
        ("error", report.error_instances),
        ("not evaluated", len(report.incomplete_ids)),
    ]
    if report.flaky_ids is not None:
        rows.append((f"flaky ({report.runs} runs)", len(report.flaky_ids)))
    for name, value in rows:
        table.add_row(name, str(value))
    table.add_row("% resolved (all)", f"{percent(resolved, total)}")
    table.add_row("% resolved (submitted)", f"{percent(resolved, submitted)}")
    console.print(table)
    if report.flaky_ids:
        console.print(f"[yellow]flaky:[/] {escape(', '.join(report.flaky_ids))}")


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"
