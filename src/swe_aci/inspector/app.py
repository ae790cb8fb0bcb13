"""`swe-aci inspect`: the site over the given run directories, served or exported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from swe_aci.inspector.runs import InspectError, discover
from swe_aci.inspector.server import make_server
from swe_aci.inspector.site import Page, Site

DEFAULT_HOST = "127.0.0.1"


def open_site(paths: list[Path], instances: str | None = None, export: bool = False) -> Site:
    """The site of the runs under `paths`, with the task file's gold and test patches."""
    tasks = {}
    if instances is not None:
        from swe_aci.tasks import load_tasks

        tasks = {task.instance_id: task for task in load_tasks(instances).tasks}
    return Site(discover(paths), tasks, export=export)


def serve(site: Site, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Serve until Ctrl-C; `announce` gets the URL once the socket is bound."""
    try:
        server = make_server(site, host, port)
    except OSError as error:
        raise InspectError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    bound_host, bound_port = server.server_address[:2]
    shown = f"[{bound_host}]" if ":" in str(bound_host) else bound_host
    announce(f"http://{shown}:{bound_port}/")
    try:
        server.serve_forever()
    finally:
        server.server_close()


def export_pages(site: Site) -> list[str]:
    """Every page an export holds, as site paths."""
    paths = ["index.html"]
    for index, run in enumerate(site.runs):
        paths += [f"run/{index}/index.html", f"run/{index}/summary.html"]
        for instance_id in run.instance_ids():
            if run.trajectory_path(instance_id) is not None:
                paths.append(f"run/{index}/instance/{instance_id}.html")
                paths.append(f"run/{index}/instance/{instance_id}/history.html")
    for a, b in site.compare_pairs():
        paths.append(f"compare/{a}-{b}/index.html")
        left, right = site.runs[a], site.runs[b]
        for instance_id in sorted(set(left.instance_ids()) & set(right.instance_ids())):
            if left.trajectory_path(instance_id) and right.trajectory_path(instance_id):
                paths.append(f"compare/{a}-{b}/{instance_id}.html")
    return paths


def export(site: Site, out: Path, progress: Callable[[str], None] = lambda _: None) -> int:
    """Write every page under `out` as static files (they open from disk); the pages written.

    `out` may not lie inside a run directory: the inspector never changes a run."""
    target = out.expanduser().resolve()
    for run in site.runs:
        if target.is_relative_to(run.root.resolve()):
            raise InspectError(f"the export directory {out} is inside the run {run.root}")
    written = 0
    for path in export_pages(site):
        page: Page = site.get(path, {})
        if page.status != 200:
            continue
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(page.body)
        written += 1
        progress(path)
    return written
