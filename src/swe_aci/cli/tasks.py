"""`swe-aci tasks humaneval`: task files built from HumanEval and HumanEvalFix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_aci.cli.common import echo, fail

tasks_app = typer.Typer(help="Build task files (HumanEval, HumanEvalFix).")


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
