"""`swe-aci rag`: the retrieval baseline over a task file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_aci.cli.common import (
    EnvOption,
    FilterOption,
    SetOption,
    SliceOption,
    TaskSourceOption,
    check_writable,
    echo,
    fail,
    guarded,
)

if TYPE_CHECKING:
    from swe_aci.rag.run import RagRecord


def rag_command(
    instances: TaskSourceOption,
    model: Annotated[str, typer.Option(help="Model name, e.g. openai/gpt-4o.")],
    retrieval: Annotated[
        str | None, typer.Option(help="bm25 (default) or oracle (the gold patch's files).")
    ] = None,
    context_tokens: Annotated[
        int | None, typer.Option(help="Prompt budget in tokens (SWE-bench: 13000, 27000, 50000).")
    ] = None,
    output_dir: Annotated[Path, typer.Option(help="Where preds.json and records go.")] = Path(
        "rag"
    ),
    config: Annotated[
        Path | None,
        typer.Option(help="RAG config YAML (default: the built-in baselines/rag.yaml)."),
    ] = None,
    env: EnvOption = None,
    filter: FilterOption = None,
    slice: SliceOption = None,
    set_: SetOption = None,
) -> None:
    """Ask a model once per task for a patch, given retrieved files (SWE-bench's RAG baseline)."""

    def body() -> None:
        from swe_aci.configuration import ConfigError
        from swe_aci.rag.bm25 import RetrievalUnavailable, bm25s_module
        from swe_aci.rag.config import load_rag_config
        from swe_aci.rag.run import make_rag_model, run_rag
        from swe_aci.records import PREDS_FILE
        from swe_aci.tasks import TaskFileError, load_tasks

        flags = {
            "model.name": model,
            "retrieval": retrieval,
            "context_tokens": context_tokens,
            "env.backend": env,
        }
        overrides = [*(set_ or []), *(f"{k}={v}" for k, v in flags.items() if v is not None)]
        try:
            rag_config = load_rag_config(config, overrides)
            task_set = load_tasks(instances, filter=filter, slice=slice)
            if rag_config.retrieval == "bm25":
                bm25s_module()
        except (ConfigError, TaskFileError, RetrievalUnavailable) as error:
            fail(str(error))
        for problem in task_set.problems:
            echo(f"skipped a bad row: {problem}", err=True)
        if not task_set.tasks:
            fail(f"no tasks to run in {instances}")
        check_writable(output_dir)
        costs: list[float] = []

        def on_record(record: RagRecord) -> None:
            costs.append(record.cost)
            print_record(record)

        predictions = run_rag(
            task_set.tasks,
            rag_config,
            make_rag_model(rag_config),
            output_dir,
            on_record=on_record,
        )
        applied = sum(1 for prediction in predictions.values() if prediction.model_patch)
        echo(
            f"{applied} of {len(predictions)} predictions hold a patch that applies "
            f"(cost ${sum(costs):.4f}); predictions: {output_dir / PREDS_FILE}"
        )

    guarded(body)


def print_record(record: RagRecord) -> None:
    from rich.console import Console
    from rich.markup import escape

    outcome = record.status if record.reason is None else f"{record.status} ({record.reason})"
    Console(highlight=False, soft_wrap=True).print(
        f"[bold]{escape(record.instance_id)}[/]: {escape(outcome)}; "
        f"{record.prompt_tokens} prompt tokens, {len(record.included)} files, ${record.cost:.4f}"
    )
