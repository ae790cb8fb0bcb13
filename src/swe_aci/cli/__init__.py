"""The CLI layer: the `swe-aci` command (typer). Each command group has its module here; this one
holds the app and the registry of commands. Nothing outside `swe_aci.cli` imports it, and its
modules import the layers below only inside the commands, so `swe-aci --help` stays fast."""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from swe_aci.cli.batch import batch_command, images_app
from swe_aci.cli.compare import compare_command, stats_command
from swe_aci.cli.configs import configs
from swe_aci.cli.demo import traj_to_demo_command
from swe_aci.cli.evaluate import evaluate_command
from swe_aci.cli.inspect import inspect_command
from swe_aci.cli.models import models_app
from swe_aci.cli.predictions import merge_preds_command
from swe_aci.cli.rag import rag_command
from swe_aci.cli.run import replay, run
from swe_aci.cli.tasks import tasks_app

app = typer.Typer(
    name="swe-aci",
    help="Let a language model fix issues in code repositories through an agent-computer interface.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help: no `<bool>` type tag on every flag, and help text is never read as
    # rich markup (which swallowed `[ray]` in `pip install 'swe-aci[ray]'`).
    rich_markup_mode=None,
)

# The registry, in the order `--help` lists it: a command, or a group of subcommands.
REGISTRY: dict[str, Callable[..., None] | typer.Typer] = {
    "run": run,
    "replay": replay,
    "configs": configs,
    "models": models_app,
    "batch": batch_command,
    "images": images_app,
    "evaluate": evaluate_command,
    "merge-preds": merge_preds_command,
    "rag": rag_command,
    "stats": stats_command,
    "compare": compare_command,
    "inspect": inspect_command,
    "traj-to-demo": traj_to_demo_command,
    "tasks": tasks_app,
}
for name, entry in REGISTRY.items():
    if isinstance(entry, typer.Typer):
        app.add_typer(entry, name=name)
    else:
        app.command(name)(entry)


def main() -> None:
    sys.exit(app())  # typer/click handle their own usage errors with exit code 2
