"""Building the environments of many tasks ahead of a batch, with a progress display."""

from __future__ import annotations

import time
from pathlib import Path
from typing import cast

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from swe_aci.env.config import EnvConfig
from swe_aci.executors.base import Jobs
from swe_aci.executors.threads import ThreadExecutor
from swe_aci.tasks import Task


def build_one(
    task: Task, env_config: EnvConfig, cache_dir: Path | None
) -> tuple[str, float, str | None]:
    from swe_aci.recipes import RecipeError, task_workspace

    started = time.monotonic()
    try:
        task_workspace(task, env_config, cache_dir=cache_dir)
    except RecipeError as error:
        return task.instance_id, time.monotonic() - started, str(error)
    return task.instance_id, time.monotonic() - started, None


def prebuild(tasks: list[Task], backend: str, workers: int, cache_dir: Path | None) -> list[str]:
    """Build (or find cached) every recipe; returns the failure lines (each names its log)."""
    console = Console(highlight=False, soft_wrap=True)
    with_recipe = [task for task in tasks if task.environment is not None]
    if len(with_recipe) < len(tasks):
        console.print(f"{len(tasks) - len(with_recipe)} tasks have no recipe (nothing to build)")
    env_config = EnvConfig(backend=backend)  # type: ignore[arg-type]
    failures: list[str] = []
    progress = Progress(
        TextColumn("building environments"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    todo = list(reversed(with_recipe))

    def built(event: object) -> None:
        instance_id, seconds, error = cast("tuple[str, float, str | None]", event)
        progress.advance(bar)
        if error is None:
            console.print(f"built {instance_id} ({seconds:.1f} s)", markup=False)
        else:
            failures.append(error)
            console.print(f"FAILED {error}", markup=False)

    with progress:
        bar = progress.add_task("build", total=len(with_recipe))
        ThreadExecutor(workers).run(
            Jobs(
                lambda: todo.pop() if todo else None,
                len(todo),
                lambda task, channel: build_one(task, env_config, cache_dir),
            ),
            built,
        )
    console.print(f"{len(with_recipe) - len(failures)} built, {len(failures)} failed")
    return failures
