"""`swe-aci batch` and `swe-aci images build`. Heavy modules are imported inside the commands."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_aci.cli.common import (
    EVALUATION_TIMEOUT,
    CacheOption,
    ConfigOption,
    EnvOption,
    EvaluationTimeoutOption,
    FilterOption,
    ModelOption,
    SetOption,
    SliceOption,
    TaskSourceOption,
    WorkersOption,
    build_config,
    fail,
    guarded,
    load_selection,
)

if TYPE_CHECKING:
    from rich.console import Console

    from swe_aci.batch.outputs import BatchOutputs
    from swe_aci.episode import EpisodeConfig
    from swe_aci.tasks import Task

ShuffleOption = Annotated[bool, typer.Option(help="Shuffle the tasks (with --seed).")]
SeedOption = Annotated[int, typer.Option(help="Seed of --shuffle.")]


def batch_command(
    instances: TaskSourceOption,
    filter: FilterOption = None,
    slice: SliceOption = None,
    shuffle: ShuffleOption = False,
    seed: SeedOption = 0,
    config: ConfigOption = None,
    model: ModelOption = None,
    env: EnvOption = None,
    workers: WorkersOption = 1,
    executor: Annotated[str, typer.Option(help="threads, or ray (pip install 'swe-aci[ray]').")] = (
        "threads"
    ),
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster to use, e.g. ray://head:10001 (default: local).")
    ] = None,
    output_dir: Annotated[Path, typer.Option(help="Where results go.")] = Path("batch_output"),
    redo: Annotated[bool, typer.Option(help="Run instances that already finished again.")] = False,
    total_cost: Annotated[
        float, typer.Option(min=0, help="USD; no new instance starts once spent (0: no limit).")
    ] = 0.0,
    cache_dir: CacheOption = None,
    evaluate: Annotated[
        bool,
        typer.Option(
            help="Grade each instance's patch right after its episode, in a fresh environment "
            "(OUT/evaluation/, as swe-aci evaluate writes it)."
        ),
    ] = False,
    evaluation_timeout: EvaluationTimeoutOption = EVALUATION_TIMEOUT,
    set_: SetOption = None,
) -> None:
    """Run the agent on every task of a task file, in parallel; resumable."""

    def body() -> None:
        from rich.console import Console

        from swe_aci.batch.display import LineDisplay, LiveDisplay, summary_table
        from swe_aci.batch.instance import FatalBatchError
        from swe_aci.batch.outputs import BatchOutputs, OutputsError
        from swe_aci.batch.run_record import (
            close_batch_log,
            config_record,
            open_batch_log,
            swe_aci_version,
        )
        from swe_aci.batch.runner import BatchOptions, BatchRunner
        from swe_aci.records import BATCH_LOG_FILE

        if executor not in ("threads", "ray"):
            fail(f"unknown --executor {executor!r}: threads or ray")
        if executor == "ray":
            try:
                import ray  # noqa: F401
            except ImportError:
                fail("the ray executor needs Ray: pip install 'swe-aci[ray]'")
        task_set = load_selection(instances, filter, slice, shuffle, seed)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env}
        )
        try:
            outputs = BatchOutputs(output_dir)
        except OutputsError as error:
            fail(str(error))
        config_data, config_hash = config_record(episode_config)
        previous = outputs.previous_config_hash()
        if previous and previous != config_hash and outputs.results and not redo:
            fail(
                f"{output_dir} holds results of a different config (run.yaml); "
                "use another --output-dir, or --redo to run everything again"
            )
        outputs.write_run_record(
            {
                "swe_aci_version": swe_aci_version(),
                "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "command": sys.argv,
                "task_file": str(Path(instances).expanduser().resolve()),
                "task_file_sha256": task_set.source_hash,
                "selection": {"filter": filter, "slice": slice, "shuffle": shuffle, "seed": seed},
                "instances": len(task_set.tasks),
                "executor": executor,
                "workers": workers,
                "model": episode_config.model.name,
                "config_hash": config_hash,
                "config": config_data,
            }
        )
        handler = open_batch_log(output_dir / BATCH_LOG_FILE)
        console = Console(highlight=False, soft_wrap=True)
        options = BatchOptions(
            workers=workers,
            executor=executor,  # type: ignore[arg-type]
            ray_address=ray_address,
            redo=redo,
            total_cost=total_cost,
            cache_dir=cache_dir,
            evaluation_timeout=evaluation_timeout if evaluate else None,
        )
        runner = BatchRunner(task_set.tasks, episode_config, outputs, options)
        display = LiveDisplay(console) if console.is_terminal else LineDisplay(console)
        try:
            with display:
                runner.display = display
                state = runner.run()
        except FatalBatchError as error:
            fail(f"batch stopped: {error}", code=1)
        finally:
            close_batch_log(handler)
        console.print(summary_table(state))
        console.print(f"predictions: {outputs.preds_path}")
        if state.stop_reason and state.stop_reason.startswith("interrupted"):
            raise typer.Exit(130)
        if evaluate:
            grade(task_set.tasks, outputs, episode_config, console)

    def grade(
        tasks: list[Task], outputs: BatchOutputs, config: EpisodeConfig, console: Console
    ) -> None:
        """The run's evaluation report (instances graded by their workers are not graded again;
        finished instances of an earlier run without --evaluate are graded now)."""
        from swe_aci.batch.evaluation import evaluate_outputs
        from swe_aci.cli.evaluate import print_summary
        from swe_aci.records import EVALUATION_DIR, REPORT_FILE

        directory = output_dir / EVALUATION_DIR
        _, report = evaluate_outputs(
            tasks,
            outputs,
            config.env,
            directory,
            timeout=evaluation_timeout,
            workers=workers,
            cache_dir=cache_dir,
        )
        print_summary(report, console)
        console.print(f"evaluation: {directory / REPORT_FILE}")

    guarded(body)


images_app = typer.Typer(help="Environments built from task recipes.", no_args_is_help=True)


@images_app.command("build")
def images_build(
    instances: TaskSourceOption,
    filter: FilterOption = None,
    slice: SliceOption = None,
    env: Annotated[
        str, typer.Option(help="Build for: docker (images), or bwrap/local (host cache).")
    ] = "docker",
    workers: WorkersOption = 1,
    cache_dir: CacheOption = None,
) -> None:
    """Build ahead the environments of the tasks that have a recipe; report each failure."""

    def body() -> None:
        from swe_aci.batch.prebuild import prebuild

        if env not in ("docker", "bwrap", "local", "auto"):
            fail(f"unknown --env {env!r}: docker, bwrap, local or auto")
        task_set = load_selection(instances, filter, slice)
        failures = prebuild(task_set.tasks, env, workers, cache_dir)
        if failures:
            raise typer.Exit(1)

    guarded(body)
