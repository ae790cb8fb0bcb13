"""`swe-aci configs`: the built-in configs and what each is for."""

from __future__ import annotations

import typer

from swe_aci.cli.common import guarded


def configs() -> None:
    """List the built-in configs (use one with --config NAME) and what each is for."""

    def body() -> None:
        from swe_aci.configuration import builtin_configs

        listed = builtin_configs()
        width = max(map(len, listed), default=0)
        for name, description in listed.items():
            typer.echo(f"{name:<{width}}  {description or '(no description)'}")

    guarded(body)
