"""`swe-aci batch` and `swe-aci images build`. Heavy modules are imported inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_aci.cli.common import (
    EVALUATION_TIMEOUT,
    CacheOption,
    ConfigOption,
    DatasetOption,
    EnvOption,
    EvaluationTimeoutOption,
    FilterOption,
    ModelOption,
    SetOption,
    SliceOption,
    SplitOption,
    TaskSourceOption,
    WorkersOption,
    build_config,
    fail,
    guarded,
    load_selection,
    shown,
)

ShuffleOption = Annotated[bool, typer.Option(help="Shuffle the tasks (with --seed).")]
SeedOption = Annotated[int, typer.Option(help="Seed of --shuffle.")]


def batch_command(
    instances: TaskSourceOption,
    dataset: DatasetOption = None,
    split: SplitOption = None,
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

        from swe_aci.batch.display import summary_table
        from swe_aci.batch.instance import FatalBatchError
        from swe_aci.batch.run_record import RunRecord
        from swe_aci.batch.runner import BatchOptions
        from swe_aci.batch.session import Grading, SessionError, run_session
        from swe_aci.cli.evaluate import print_summary
        from swe_aci.episode import missing_requirements
        from swe_aci.evaluate.options import GradingOptions
        from swe_aci.executors.base import worker_limit
        from swe_aci.records import EVALUATION_DIR, REPORT_FILE

        if executor not in ("threads", "ray"):
            fail(f"unknown --executor {executor!r}: threads or ray")
        if executor == "ray":
            from importlib.util import find_spec

            if find_spec("ray") is None:  # not imported here: the runner sets Ray up first
                fail("the ray executor needs Ray: pip install 'swe-aci[ray]'")
        task_set = load_selection(
            instances, filter, slice, shuffle, seed, dataset=dataset, split=split
        )
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env}
        )
        if problem := missing_requirements(episode_config):
            fail(problem)  # once, before any instance loads the model
        repository = {
            key: value for key, value in (("dataset", dataset), ("split", split)) if value
        }
        record = RunRecord.of(
            instances,
            task_set,
            filter=filter,
            slice=slice,
            shuffle=shuffle,
            seed=seed,
            **repository,
        )
        grading_options = GradingOptions(evaluation_timeout, workers=workers, cache_dir=cache_dir)
        options = BatchOptions(
            workers=workers,
            executor=executor,  # type: ignore[arg-type]
            ray_address=ray_address,
            redo=redo,
            total_cost=total_cost,
            cache_dir=cache_dir,
            evaluation=grading_options if evaluate else None,
        )
        # instances graded by their workers are not graded again; finished instances of an
        # earlier run without --evaluate are graded now
        evaluation = output_dir / EVALUATION_DIR
        grading = Grading(evaluation, grading_options) if evaluate else None
        console = Console(highlight=False, soft_wrap=True)
        if workers > (limit := worker_limit()):
            console.print(f"--workers capped at {limit} (8 per CPU)", markup=False)
        try:
            outcome = run_session(
                task_set.tasks,
                episode_config,
                output_dir,
                options,
                console,
                record,
                grading=grading,
            )
        except SessionError as error:
            fail(str(error))
        except FatalBatchError as error:
            fail(f"batch stopped: {error}", code=1)
        console.print(summary_table(outcome.state))
        console.print(f"predictions: {shown(outcome.outputs.preds_path)}")
        if outcome.interrupted:
            raise typer.Exit(130)
        if outcome.report is not None:
            print_summary(outcome.report, console)
            console.print(f"evaluation: {shown(evaluation / REPORT_FILE)}")

    guarded(body)


images_app = typer.Typer(help="Environments built from task recipes.", no_args_is_help=True)


@images_app.command("build")
def images_build(
    instances: TaskSourceOption,
    dataset: DatasetOption = None,
    split: SplitOption = None,
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
        task_set = load_selection(instances, filter, slice, dataset=dataset, split=split)
        failures = prebuild(task_set.tasks, env, workers, cache_dir)
        if failures:
            raise typer.Exit(1)

    guarded(body)
