"""The inspector's pages, addressed by relative paths that are the same on the server and in an
export (`index.html`, `run/<k>/index.html`, `run/<k>/instance/<id>.html`, ...), so every link
is relative and an exported copy opens from disk.

Templates are Jinja with autoescape on; the only unescaped values are the inspector's own script
and style, which are inline and allowed by their hashes in the Content-Security-Policy (no other
script, style or origin is allowed).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from swe_aci.inspector.runs import Run
from swe_aci.inspector.search import search_run
from swe_aci.inspector.text import visible
from swe_aci.inspector.views import (
    TrajectoryCache,
    aligned_steps,
    instance_view,
)
from swe_aci.records import is_valid_instance_id
from swe_aci.trajectory.instance import NOT_EVALUATED
from swe_aci.trajectory.store import TrajectoryError

HERE = Path(__file__).parent
SCRIPT = (HERE / "assets" / "app.js").read_text(encoding="utf-8")
STYLE = (HERE / "assets" / "app.css").read_text(encoding="utf-8")
HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"


def source_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(connect: bool) -> str:
    """Nothing but the inspector's own inline script and style, images as data: URIs, and (on
    the server) fetches of its own observations."""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {source_hash(SCRIPT)}",
            f"style-src {source_hash(STYLE)}",
            "img-src data:",
            "connect-src 'self'" if connect else "connect-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


@dataclass
class Page:
    status: int
    content_type: str
    body: bytes


NOT_FOUND = Page(404, TEXT, b"not found\n")
RUN_PATH = re.compile(r"run/(\d+)/(.*)")
COMPARE_PATH = re.compile(r"compare/(\d+)-(\d+)/(.+)\.html")


class Site:
    """Renders every page of the given runs; `export` renders for static files (observations in
    the page, no server search)."""

    def __init__(self, runs: list[Run], tasks: dict[str, Any] | None = None, export: bool = False):
        self.runs = runs
        self.tasks = tasks or {}
        self.export = export
        self.cache = TrajectoryCache()
        self.csp = content_security_policy(connect=not export)
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=StrictUndefined,
            trim_blocks=False,
        )

    # -- routing -------------------------------------------------------------------------------

    def get(self, path: str, query: dict[str, list[str]]) -> Page:
        """The page at `path` (relative, URL-encoded); 404 for anything else."""
        path = unquote(path).lstrip("/") or "index.html"
        if path == "index.html":
            return self.html(self.index())
        match = RUN_PATH.fullmatch(path)
        if match and int(match.group(1)) < len(self.runs):
            return self.run_page(self.runs[int(match.group(1))], match.group(2), query)
        match = COMPARE_PATH.fullmatch(path)
        if match:
            a, b = int(match.group(1)), int(match.group(2))
            if a < len(self.runs) and b < len(self.runs) and a != b:
                name = match.group(3)
                text = self.compare_index(a, b) if name == "index" else self.compare(a, b, name)
                return self.html(text)
        return NOT_FOUND

    def run_page(self, run: Run, rest: str, query: dict[str, list[str]]) -> Page:
        index = self.runs.index(run)
        if rest in ("", "index.html"):
            return self.html(self.run(index))
        if rest == "summary.html":
            return self.html(self.summary(index))
        if rest == "search.html" and not self.export:
            return self.html(self.search(index, (query.get("q") or [""])[0]))
        if rest.startswith("files/") and not self.export:
            return self.raw_file(run, rest.removeprefix("files/"))
        parts = rest.split("/")
        if len(parts) == 2 and parts[0] == "instance" and parts[1].endswith(".html"):
            return self.html(self.instance(index, parts[1].removesuffix(".html")))
        if len(parts) == 3 and parts[0] == "instance" and parts[2] == "history.html":
            return self.html(self.history(index, parts[1]))
        if len(parts) == 4 and parts[0] == "instance" and parts[2] == "observation":
            number = parts[3].removesuffix(".txt")
            if number.isdigit() and not self.export:
                return self.observation(run, parts[1], int(number))
        return NOT_FOUND

    def html(self, text: str | None) -> Page:
        return NOT_FOUND if text is None else Page(200, HTML, text.encode("utf-8"))

    def render(self, template: str, root: str, title: str, page: str, **values: Any) -> str:
        return self.templates.get_template(template).render(
            root=root,
            title=title,
            page=page,
            export=self.export,
            csp=self.csp,
            script=Markup(SCRIPT),  # the inspector's own script, not agent text
            style=Markup(STYLE),
            **values,
        )

    # -- pages ---------------------------------------------------------------------------------

    def index(self) -> str:
        counts = [len(run.instance_ids()) for run in self.runs]
        return self.render(
            "index.html",
            "",
            "runs",
            "index",
            runs=self.runs,
            counts=counts,
            pairs=self.compare_pairs(),
        )

    def compare_pairs(self) -> list[tuple[int, int]]:
        """The first run against each other run."""
        return [(0, other) for other in range(1, len(self.runs))]

    def run(self, index: int) -> str:
        run = self.runs[index]
        rows = run.rows()
        outcomes = Counter(row.outcome for row in rows)
        return self.render(
            "run.html",
            "../../",
            run.name,
            "run",
            run=run,
            rows=rows,
            exit_counts=Counter(row.exit_status for row in rows).most_common(),
            outcome_counts=outcomes.most_common(),
            evaluated=bool(rows) and set(outcomes) != {NOT_EVALUATED},
            resolved=outcomes.get("resolved", 0),
        )

    def summary(self, index: int) -> str:
        from swe_aci.inspector.summary import summary_page_data

        run = self.runs[index]
        sections, plots, note = summary_page_data(run)
        return self.render(
            "summary.html",
            "../../",
            f"summary of {run.name}",
            "summary",
            run=run,
            sections=sections,
            plots=plots,
            plots_note=note,
        )

    def search(self, index: int, query: str) -> str:
        run = self.runs[index]
        matches, truncated = search_run(run, query, self.cache) if query.strip() else ([], False)
        return self.render(
            "search.html",
            "../../",
            f"search {run.name}",
            "search",
            run=run,
            query=visible(query, 500),
            matches=matches,
            truncated=truncated,
        )

    def load(self, run: Run, instance_id: str) -> tuple[Any, dict[str, Any]] | None:
        path = run.trajectory_path(instance_id)
        if path is None:
            return None
        try:
            return self.cache.load(path)
        except TrajectoryError:
            return None

    def instance(self, index: int, instance_id: str) -> str | None:
        run = self.runs[index]
        loaded = self.load(run, instance_id)
        if loaded is None:
            return None
        ids = run.instance_ids()
        position = ids.index(instance_id) if instance_id in ids else -1
        view = instance_view(
            run,
            instance_id,
            *loaded,
            inline=self.export,
            task=self.tasks.get(instance_id),
        )
        outcome = run.outcomes().get(instance_id)
        compare_links = [
            (self.runs[b if a == index else a].name, f"../../../compare/{a}-{b}/{instance_id}.html")
            for a, b in self.compare_pairs()
            if index in (a, b)
            and self.runs[b if a == index else a].trajectory_path(instance_id) is not None
        ]
        return self.render(
            "instance.html",
            "../../../",
            f"{instance_id} ({run.name})",
            "instance",
            run=run,
            view=view,
            outcome=outcome,
            compare_links=compare_links,
            prev_href=f"{ids[position - 1]}.html" if position > 0 else "",
            next_href=f"{ids[position + 1]}.html" if 0 <= position < len(ids) - 1 else "",
        )

    def history(self, index: int, instance_id: str) -> str | None:
        run = self.runs[index]
        loaded = self.load(run, instance_id)
        if loaded is None:
            return None
        from swe_aci.models.base import message_text

        messages = [
            {
                "index": number,
                "role": visible(message.get("role", ""), 100),
                "kind": visible(message.get("message_type", ""), 100),
                "text": visible(message_text(message), 0),
            }
            for number, message in enumerate(loaded[1]["history"])
        ]
        return self.render(
            "history.html",
            "../../../../",
            f"messages of {instance_id}",
            "history",
            run=run,
            instance_id=instance_id,
            messages=messages,
        )

    def observation(self, run: Run, instance_id: str, number: int) -> Page:
        loaded = self.load(run, instance_id)
        if loaded is None or not 1 <= number <= len(loaded[1]["trajectory"]):
            return NOT_FOUND
        text = loaded[1]["trajectory"][number - 1]["observation"]
        return Page(200, TEXT, visible(text, 0).encode("utf-8"))

    def raw_file(self, run: Run, relative: str) -> Page:
        """A file under the run directory as text (a `..` or a symlink out of it: 404)."""
        path = run.inside(relative)
        if path is None or not path.is_file():
            return NOT_FOUND
        try:
            return Page(200, TEXT, path.read_bytes())
        except OSError:
            return NOT_FOUND

    def compare_index(self, a: int, b: int) -> str:
        left, right = self.runs[a], self.runs[b]
        left_rows = {row.instance_id: row for row in left.rows()}
        right_rows = {row.instance_id: row for row in right.rows()}
        rows = [
            (
                instance_id,
                f"{left_rows[instance_id].exit_status}, {left_rows[instance_id].outcome}",
                f"{right_rows[instance_id].exit_status}, {right_rows[instance_id].outcome}",
            )
            for instance_id in sorted(set(left_rows) & set(right_rows))
        ]
        return self.render(
            "compare_index.html",
            "../../",
            f"{left.name} vs {right.name}",
            "compare-index",
            left=left,
            right=right,
            rows=rows,
        )

    def compare(self, a: int, b: int, instance_id: str) -> str | None:
        if not is_valid_instance_id(instance_id):
            return None
        left, right = self.runs[a], self.runs[b]
        views = []
        for run in (left, right):
            loaded = self.load(run, instance_id)
            if loaded is None:
                return None
            views.append(instance_view(run, instance_id, *loaded, inline=True))
        rows, first = aligned_steps(views[0].steps, views[1].steps)
        return self.render(
            "compare.html",
            "../../",
            f"{instance_id}: {left.name} vs {right.name}",
            "compare",
            left=left,
            right=right,
            instance_id=instance_id,
            left_status=views[0].exit_status,
            right_status=views[1].exit_status,
            rows=rows,
            first=first,
        )
