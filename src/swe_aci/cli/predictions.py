"""`swe-aci merge-preds`: the predictions of several runs or shards as one preds.json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from swe_aci.cli.common import echo, fail, guarded


def merge_preds_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories (preds.json or <id>.pred files) or predictions files."
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The merged preds.json.")],
    prefer: Annotated[
        Literal["first", "last"] | None,
        typer.Option(help="On a conflict (same id, other patch), the first or last input wins."),
    ] = None,
    winner: Annotated[
        Path | None, typer.Option(help="On a conflict, this input wins (one of the inputs).")
    ] = None,
) -> None:
    """Merge the predictions of several runs or shards; conflicting ids are refused unless told."""

    def body() -> None:
        from swe_aci.analysis.merge import MergeError, merge_predictions
        from swe_aci.records import predictions_json, write_json_atomic

        if prefer is not None and winner is not None:
            fail("give --prefer or --winner, not both")
        try:
            merged = merge_predictions(inputs, prefer=prefer, winner=winner)
        except MergeError as error:
            fail(str(error))
        ordered = dict(sorted(merged.predictions.items()))
        try:
            write_json_atomic(output, predictions_json(ordered))
        except OSError as error:
            fail(f"cannot write {output}: {error.strerror}")
        rule = f"--prefer {prefer}" if prefer else f"--winner {winner}"
        decided = f", {len(merged.resolved)} conflicts decided by {rule}" if merged.resolved else ""
        echo(
            f"merged {len(ordered)} predictions from {len(inputs)} inputs into {output} "
            f"({merged.duplicates} identical duplicates{decided})"
        )

    guarded(body)
