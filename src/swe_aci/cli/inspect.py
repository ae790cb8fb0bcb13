"""`swe-aci inspect`. Heavy modules are imported inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_aci.cli.common import echo, fail, guarded


def inspect_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="Run directories (of batch, run, evaluate, compare; paper-era too)."),
    ],
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: a free one).")] = 0,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but 127.0.0.1 exposes the runs.")
    ] = "127.0.0.1",
    instances: Annotated[
        str | None, typer.Option(help="Task file: show each instance's gold and test patch.")
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(help="Write the pages as static files into this directory instead."),
    ] = None,
) -> None:
    """Look at runs in a browser: every instance, each step, evaluation, comparison (read-only)."""

    def body() -> None:
        from swe_aci.inspector.app import export as export_site
        from swe_aci.inspector.app import open_site, serve
        from swe_aci.inspector.runs import InspectError
        from swe_aci.tasks import TaskFileError

        try:
            site = open_site(run_dirs, instances, export=export is not None)
            if export is not None:
                count = export_site(site, export)
                echo(f"wrote {count} pages: {export / 'index.html'}")
                return
            serve(site, host, port, lambda url: echo(f"swe-aci inspect: {url}"))
        except (InspectError, TaskFileError) as error:
            fail(str(error))
        except KeyboardInterrupt:
            typer.echo("stopped")

    guarded(body)
