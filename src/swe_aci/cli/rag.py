"""`swe-aci rag`: a thin alias of `swe-aci batch --config baselines/rag` (the RAG strategy,
`strategy.type: rag`), with the retrieval and the budget as flags."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_aci.cli.common import EnvOption, FilterOption, SetOption, SliceOption, TaskSourceOption


def rag_command(
    context: typer.Context,
    instances: TaskSourceOption,
    model: Annotated[str, typer.Option(help="Model name, e.g. openai/gpt-4o.")],
    retrieval: Annotated[
        str | None, typer.Option(help="bm25 (default) or oracle (the gold patch's files).")
    ] = None,
    context_tokens: Annotated[
        int | None, typer.Option(help="Prompt budget in tokens (SWE-bench: 13000, 27000, 50000).")
    ] = None,
    output_dir: Annotated[Path, typer.Option(help="Where the batch's outputs go.")] = Path("rag"),
    config: Annotated[
        Path | None,
        typer.Option(help="Episode config with strategy.type rag (default: baselines/rag)."),
    ] = None,
    env: EnvOption = None,
    filter: FilterOption = None,
    slice: SliceOption = None,
    set_: SetOption = None,
) -> None:
    """Ask a model once per task for a patch, given retrieved files (SWE-bench's RAG baseline)."""
    arguments = ["batch", "--instances", instances, "--model", model]
    arguments += ["--config", str(config or "baselines/rag"), "--output-dir", str(output_dir)]
    for flag, value in (("--env", env), ("--filter", filter), ("--slice", slice)):
        if value is not None:
            arguments += [flag, value]
    settings = [*(set_ or [])]
    if retrieval is not None:
        settings.append(f"strategy.retrieval={retrieval}")
    if context_tokens is not None:
        settings.append(f"strategy.context_tokens={context_tokens}")
    for setting in settings:
        arguments += ["--set", setting]
    root = context.find_root()
    root.command.main(arguments, prog_name=root.info_name, standalone_mode=True)
