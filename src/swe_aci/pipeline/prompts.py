"""The variables of the repair prompts: the whole function to rewrite with its file's top-level
lines, or the numbered regions of the targets to edit by search/replace blocks."""

from __future__ import annotations

from typing import Any

from swe_aci.pipeline import structure
from swe_aci.pipeline.blocks import numbered, region
from swe_aci.pipeline.candidates import Target
from swe_aci.pipeline.skeleton import Location, context_lines

REGION_MARGIN = 3  # lines shown before and after a target's region


def rewrite_variables(issue: str, tree: dict[str, str], location: Location) -> dict[str, Any]:
    return {
        "problem_statement": issue,
        "path": location.path,
        "name": location.name,
        "code": location.source.rstrip("\n"),
        "context": context_lines(tree[location.path], location.name),
    }


def blocks_variables(issue: str, tree: dict[str, str], target: Target, size: int) -> dict[str, Any]:
    """Each target's file and its lines (at most `size` around the issue's words, and a few
    more around them) numbered as in the file."""
    regions = []
    for location in target.locations:
        text = tree[location.path]
        start, end = region(text, location.start, location.end, issue, size)
        start, end = max(1, start - REGION_MARGIN), end + REGION_MARGIN
        code = numbered(text, start, end)
        end = min(end, len(text.splitlines()))
        fence = structure.fence(location.path)
        regions.append(f"{location.path} (lines {start}-{end}):\n```{fence}\n{code}\n```")
    names = " and ".join(
        f"`{location.qualname}` in {location.path}" for location in target.locations
    )
    return {"problem_statement": issue, "names": names, "regions": "\n\n".join(regions)}
