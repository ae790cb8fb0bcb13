"""The CLI layer: the `swe-aci` command (typer). Each command group has its module here; this one
holds the app and the registry of commands. Nothing outside `swe_aci.cli` imports it, and its
modules import the layers below only inside the commands, so `swe-aci --help` stays fast."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, MutableMapping
from inspect import getdoc
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

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

SETTINGS: dict[str, Any] = {
    "add_completion": False,
    "pretty_exceptions_enable": False,
    # Click's plain help: no `<bool>` type tag on every flag, and help text is never read as
    # rich markup (which swallowed `[ray]` in `pip install 'swe-aci[ray]'`).
    "rich_markup_mode": None,
}

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


class LazyCommands(TyperGroup):
    """The top-level group. Typer's analysis of a command's parameters (about 80 ms for all of
    them) runs only for the command that is invoked or asked for its own help; the list in
    `swe-aci --help` comes from the registry's docstrings."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = BuiltOnLookup()

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(REGISTRY)

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:  # click's formatter
        limit = formatter.width - 6 - max(map(len, REGISTRY))
        rows = [
            (name, TyperCommand(name, help=summary(entry)).get_short_help_str(limit))
            for name, entry in REGISTRY.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class BuiltOnLookup(MutableMapping[str, Any]):
    """The registry's commands, each made into its click form by typer when first looked up."""

    def __init__(self) -> None:
        self.built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            entry = REGISTRY[name]
            holder = typer.Typer(**SETTINGS)
            if isinstance(entry, typer.Typer):
                holder.add_typer(entry, name=name)
            else:
                holder.command(name)(entry)
            self.built[name] = typer.main.get_group(holder).commands[name]
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("commands are declared in swe_aci.cli.REGISTRY")

    def __delitem__(self, name: str) -> None:
        raise TypeError("commands are declared in swe_aci.cli.REGISTRY")

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)


def summary(entry: Callable[..., None] | typer.Typer) -> str:
    """The help a registry entry declares: a group's `help=`, a command's docstring."""
    if isinstance(entry, typer.Typer):
        return entry.info.help if isinstance(entry.info.help, str) else ""
    return getdoc(entry) or ""


def _top_level() -> None:
    """The top level has no options of its own; this callback makes it a group."""


app = typer.Typer(
    name="swe-aci",
    help="Let a language model fix issues in code repositories through an agent-computer interface.",
    cls=LazyCommands,
    callback=_top_level,
    no_args_is_help=True,
    **SETTINGS,
)


def main() -> None:
    sys.exit(app())  # typer/click handle their own usage errors with exit code 2
