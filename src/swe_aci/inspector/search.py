"""Text search over a whole run: every step's thought, action and observation, case-insensitive,
listing the matching steps (capped) with a snippet around the first hit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from swe_aci.inspector.text import visible
from swe_aci.trajectory.store import TrajectoryError

if TYPE_CHECKING:
    from swe_aci.inspector.runs import Run
    from swe_aci.inspector.views import TrajectoryCache

MAX_MATCHES = 500
SNIPPET = 120  # characters each side of the hit
FIELDS = ("thought", "action", "observation")


@dataclass
class Match:
    instance_id: str
    step: int
    field: str
    snippet: str


def search_run(run: Run, query: str, cache: TrajectoryCache) -> tuple[list[Match], bool]:
    """The steps of `run` whose thought, action or observation contains `query`; whether the
    list was cut at MAX_MATCHES."""
    needle = query.casefold()
    matches: list[Match] = []
    for instance_id in run.instance_ids():
        path = run.trajectory_path(instance_id)
        if path is None:
            continue
        try:
            _, loaded = cache.load(path)
        except TrajectoryError:
            continue
        for number, step in enumerate(loaded["trajectory"], start=1):
            for field in FIELDS:
                text = step[field] if isinstance(step[field], str) else ""
                at = text.casefold().find(needle)
                if at < 0:
                    continue
                start = max(0, at - SNIPPET)
                snippet = visible(text[start : at + len(needle) + SNIPPET], 0)
                matches.append(Match(instance_id, number, field, snippet))
                if len(matches) >= MAX_MATCHES:
                    return matches, True
                break
    return matches, False
