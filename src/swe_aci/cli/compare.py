"""`swe-aci stats` and `swe-aci compare`. Heavy modules are imported inside the commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from swe_aci.cli.common import (
    EVALUATION_TIMEOUT,
    CacheOption,
    DatasetOption,
    EnvOption,
    EvaluationTimeoutOption,
    FilterOption,
    SliceOption,
    SplitOption,
    TaskSourceOption,
    WorkersOption,
    build_config,
    check_backend,
    fail,
    guarded,
    load_selection,
    shown,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from swe_aci.analysis.paper import PaperStats
    from swe_aci.analysis.stats import RunStats
    from swe_aci.evaluate.report import InstanceReport
    from swe_aci.trajectory.instance import InstanceResult


def stats_command(
    directory: Annotated[
        Path, typer.Argument(help="A run's output directory (of swe-aci batch or run).")
    ],
    per_instance: Annotated[bool, typer.Option(help="Also list every instance.")] = False,
    report: Annotated[
        Path | None,
        typer.Option(
            help="The run's evaluation report.json, to split by resolved / unresolved "
            "(default: DIRECTORY/evaluation/report.json when it exists)."
        ),
    ] = None,
    plots: Annotated[
        Path | None, typer.Option(help="Write the paper's plots as PNG files into this directory.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the numbers as JSON.")] = False,
) -> None:
    """Statistics of a run's trajectories: exit statuses, turns, failed edits, cost, and the
    paper's analyses (by outcome when evaluated)."""

    def body() -> None:
        import json

        from rich.console import Console

        from swe_aci.analysis.paper import paper_stats, read_report
        from swe_aci.analysis.stats import AnalysisError, read_run, summarize

        try:
            records = read_run(directory)
            report_data = read_report(directory, report)
        except AnalysisError as error:
            fail(str(error))
        if not records:
            fail(f"no trajectories in {directory} (expected <id>/<id>.traj or results.json)")
        run = summarize(records)
        paper = paper_stats(records, report_data)
        written = write_plots(paper, plots) if plots is not None else []
        if as_json:
            typer.echo(json.dumps({"run": run_json(run), "paper": paper.to_json()}, indent=2))
            return
        console = Console(highlight=False, soft_wrap=True)
        for problem in run.problems:
            console.print(f"[yellow]unreadable trajectory:[/] {shown(problem)}")
        if per_instance:
            console.print(instances_table(records))
        console.print(exit_status_table(run))
        console.print(run_table(run))
        for table in paper_tables(paper):
            console.print(table)
        for path in written:
            console.print(f"plot: {shown(path)}")

    guarded(body)


def write_plots(paper: PaperStats, directory: Path) -> list[Path]:
    from swe_aci.analysis.plots import PlotsUnavailable
    from swe_aci.analysis.plots import write_plots as write

    try:
        return write(paper, directory)
    except PlotsUnavailable as error:
        fail(str(error))
    except OSError as error:
        fail(f"cannot write the plots into {directory}: {error}")


def run_json(run: RunStats) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(run)


def paper_tables(paper: PaperStats) -> list[Table]:
    """The paper's analyses, one table per section."""
    from rich.markup import escape
    from rich.table import Table

    from swe_aci.analysis.paper import summary_sections

    tables = []
    for title, rows in summary_sections(paper):
        table = Table(title=escape(title))
        table.add_column("")
        table.add_column("value", justify="right")
        for name, value in rows:
            table.add_row(escape(name), escape(value))
        tables.append(table)
    return tables


def exit_status_table(run: RunStats) -> Table:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="exit statuses")
    table.add_column("exit status")
    table.add_column("instances", justify="right")
    for status, count in run.exit_statuses.items():
        table.add_row(escape(status), str(count))
    return table


def run_table(run: RunStats) -> Table:
    from rich.table import Table

    def share(part: int, whole: int) -> str:
        return f"{part} ({100 * part / whole:.1f}%)" if whole else str(part)

    def number(value: float | None, decimals: int = 1) -> str:
        return "-" if value is None else f"{value:.{decimals}f}"

    table = Table(title="run statistics")
    table.add_column("")
    table.add_column("value", justify="right")
    rows = [
        ("instances", str(run.instances)),
        ("with a trajectory", str(run.episodes)),
        ("ended with a patch", share(run.submitted, run.instances)),
        ("mean turns", number(run.mean_turns)),
        ("median turns", number(run.median_turns)),
        ("edits", str(run.edits)),
        ("failed edits (lint guardrail)", share(run.failed_edits, run.edits)),
        ("instances with a failed edit", share(run.instances_with_failed_edit, run.episodes)),
        ("total cost", f"${run.total_cost:.4f}"),
        ("mean cost", "-" if run.mean_cost is None else f"${run.mean_cost:.4f}"),
        ("tokens sent / received", f"{run.tokens_sent} / {run.tokens_received}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def instances_table(records: list[InstanceResult]) -> Table:
    from rich.table import Table

    table = Table(title="instances")
    for name in ("instance", "exit status", "turns", "edits", "failed", "cost", "patch"):
        table.add_column(name, justify="left" if name in ("instance", "exit status") else "right")
    for record in records:
        table.add_row(
            shown(record.instance_id),
            shown(record.exit_status),
            str(record.steps),
            str(record.edits),
            str(record.failed_edits),
            f"${record.cost:.4f}",
            "yes" if record.submitted else "no",
        )
    return table


def compare_command(
    instances: TaskSourceOption,
    configs: Annotated[
        str,
        typer.Option(
            help="Comma-separated configs (built-in names or YAML files); the first is the "
            "baseline of the deltas."
        ),
    ],
    model: Annotated[
        str | None, typer.Option(help="Model name for every config, e.g. openai/gpt-4o.")
    ] = None,
    workers: WorkersOption = 1,
    env: EnvOption = None,
    output_dir: Annotated[
        Path, typer.Option(help="<dir>/<config>/ per config, and comparison.json.")
    ] = Path("comparison"),
    filter: FilterOption = None,
    slice: SliceOption = None,
    dataset: DatasetOption = None,
    split: SplitOption = None,
    timeout: EvaluationTimeoutOption = EVALUATION_TIMEOUT,
    redo: Annotated[bool, typer.Option(help="Run and evaluate everything again.")] = False,
    cache_dir: CacheOption = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a config key of every config: a.b.c=value."),
    ] = None,
) -> None:
    """Run the same instances under each config, evaluate them, compare (% resolved and more)."""

    def body() -> None:
        from rich.console import Console

        from swe_aci.analysis.compare import (
            CompareError,
            CompareInterrupted,
            ConfigRun,
            compare,
            resolve_config,
        )
        from swe_aci.analysis.comparison import comparison_table
        from swe_aci.batch.instance import FatalBatchError
        from swe_aci.batch.run_record import RunRecord
        from swe_aci.evaluate.options import GradingOptions
        from swe_aci.records import COMPARISON_FILE, OutputLock

        names = [name.strip() for name in configs.split(",") if name.strip()]
        if not names:
            fail("--configs names no config")
        try:
            resolved = [(given, *resolve_config(given)) for given in names]
        except CompareError as error:
            fail(str(error))
        task_set = load_selection(instances, filter, slice, dataset=dataset, split=split)
        if not task_set.tasks:
            fail(f"no task selected from {instances}")
        overrides = {"model.name": model, "env.backend": env}
        runs = [
            ConfigRun(name, given, build_config(path, set_ or [], **overrides))
            for given, name, path in resolved
        ]
        for run in runs:
            check_backend(run.config.env)
        record = RunRecord.of(instances, task_set, filter=filter, slice=slice)
        options = GradingOptions(timeout, workers=workers, redo=redo, cache_dir=cache_dir)
        console = Console(highlight=False, soft_wrap=True)
        try:
            with OutputLock.acquire(output_dir, "compare"):
                outcomes = compare(
                    runs, task_set, output_dir, options, console, record, evaluated_printer(console)
                )
        except CompareError as error:
            fail(str(error))
        except FatalBatchError as error:
            fail(f"comparison stopped: {error}", code=1)
        except (CompareInterrupted, KeyboardInterrupt):
            fail("interrupted; the same command resumes where it stopped", code=130)
        console.print(comparison_table(outcomes))
        console.print(f"comparison: {shown(output_dir / COMPARISON_FILE)}")

    guarded(body)


def evaluated_printer(console: Console) -> Callable[[InstanceReport, bool], None]:
    """One line per evaluated instance, as `swe-aci evaluate` prints them."""
    from swe_aci.cli.evaluate import outcome_line

    def done(report: InstanceReport, reused: bool) -> None:
        console.print(outcome_line(report, " (graded before)" if reused else ""))

    return done
