"""`swe-aci traj-to-demo`. Heavy modules are imported inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_aci.cli.common import echo, fail, guarded


def traj_to_demo_command(
    trajectory: Annotated[Path, typer.Argument(help="A trajectory that ended with submit.")],
    out: Annotated[Path, typer.Argument(help="The demonstration file to write (.traj).")],
    config: Annotated[
        Path | None,
        typer.Option(help="The config that will show it (default: default); its checks apply."),
    ] = None,
) -> None:
    """Make a demonstration from a good trajectory, checked against the config that will use it."""

    def body() -> None:
        import json

        from swe_aci.agent.demonstrations import (
            DemonstrationError,
            demonstration_from,
            demonstration_problems,
        )
        from swe_aci.episode import load_config
        from swe_aci.records import write_json_atomic
        from swe_aci.trajectory.store import load_trajectory

        episode_config = load_config(config)
        try:
            demonstration = demonstration_from(load_trajectory(trajectory))
        except DemonstrationError as error:
            fail(f"{trajectory}: {error}")
        problems = demonstration_problems(demonstration, episode_config.aci)
        if problems:
            fail(f"{trajectory}: the config would not run {problems[0]}")
        write_json_atomic(out, demonstration)
        # the config's own check of its demonstrations, on the file as written
        load_config(config, [f"agent.demonstrations={json.dumps([str(out.resolve())])}"])
        steps = len(demonstration["trajectory"])
        echo(f"wrote {out} ({steps} steps); use it with agent.demonstrations: [{out}]")

    guarded(body)
