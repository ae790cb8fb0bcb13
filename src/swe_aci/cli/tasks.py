"""`swe-aci tasks humaneval`: task files built from HumanEval and HumanEvalFix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_aci.cli.common import echo, fail

tasks_app = typer.Typer(
    help="Build task files (HumanEval, HumanEvalFix); export a task set as a SWE-bench 5 task repository."
)


@tasks_app.command("humaneval")
def humaneval_command(
    out: Annotated[Path, typer.Option(help="Directory for tasks.jsonl and the repositories.")],
    fix: Annotated[
        Path | None,
        typer.Option(help="HumanEvalFix rows (HumanEvalPack JSONL/JSON) instead of HumanEval."),
    ] = None,
) -> None:
    """Write HumanEval (or HumanEvalFix) problems as single-file repository tasks."""
    from swe_aci.tasks.humaneval import HumanEvalError, build_tasks, write_tasks

    try:
        tasks, problems = build_tasks(fix)
    except HumanEvalError as error:
        fail(str(error))
    for problem in problems:
        echo(f"skipped {problem}", err=True)
    if not tasks:
        fail("no usable rows: nothing written")
    try:
        task_file = write_tasks(tasks, out)
    except OSError as error:
        fail(f"cannot write to {out}: {error.strerror or error}")
    echo(f"{len(tasks)} tasks: {task_file}")


@tasks_app.command("export")
def export_command(
    out: Annotated[Path, typer.Argument(help="An empty directory for the task repository.")],
    instances: Annotated[str, typer.Option(help="Task file (rows with environment recipes).")],
    format: Annotated[
        str, typer.Option("--format", help="swebench5: a SWE-bench 5 task repository.")
    ] = "swebench5",
    dataset: Annotated[str, typer.Option(help="The dataset name sweb.yaml publishes.")] = "",
    split: Annotated[str, typer.Option(help="The split of every task.")] = "test",
) -> None:
    """Write a task set as a SWE-bench 5 task repository (its Dockerfiles build each recipe's
    environment on this machine's docker engine), readable by swebench's load_task_repo."""
    from swe_aci.recipes import RecipeError
    from swe_aci.recipes.task_repo_export import export_task_repo
    from swe_aci.tasks import TaskFileError, load_tasks

    if format != "swebench5":
        fail(f"--format {format!r}: the one format written is swebench5")
    try:
        task_set = load_tasks(instances)
    except TaskFileError as error:
        fail(str(error))
    for problem in task_set.problems:
        echo(f"skipped row: {problem}", err=True)
    name = dataset or Path(instances).stem
    try:
        exported = export_task_repo(
            task_set.tasks,
            out,
            dataset=name,
            split=split,
            echo=lambda line: echo(line, err=True),
        )
    except RecipeError as error:
        fail(str(error))
    except OSError as error:
        fail(f"cannot write to {out}: {error.strerror or error}")
    for skipped in exported.skipped:
        echo(f"skipped {skipped}", err=True)
    if not exported.written:
        fail("no task could be exported")
    echo(f"{len(exported.written)} tasks: {out} (dataset {name}, split {split})")
