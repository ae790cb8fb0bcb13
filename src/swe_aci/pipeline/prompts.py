"""The variables of the repair prompts: the whole function to rewrite (its long docstring folded
to one line, put back from the file after the reply) with its file's top-level lines, or the
numbered regions of the targets to edit by search/replace blocks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from swe_aci.pipeline import structure
from swe_aci.pipeline.blocks import Span, comment_lines, docstring_lines, numbered, region
from swe_aci.pipeline.candidates import Target
from swe_aci.pipeline.repair import fold_docstring
from swe_aci.pipeline.skeleton import Location, context_lines

REGION_MARGIN = 3  # lines shown before and after a target's region


def rewrite_variables(issue: str, tree: dict[str, str], location: Location) -> dict[str, Any]:
    return {
        "problem_statement": issue,
        "path": location.path,
        "name": location.name,
        "code": fold_docstring(location.source).rstrip("\n"),
        "context": context_lines(tree[location.path]),
    }


@dataclass(frozen=True)
class Region:
    """The lines of a target's file shown numbered, the line of the span where the
    reproduction test fails (its traceback's innermost frame there), if any, and the lines
    folded."""

    location: Location
    start: int
    end: int
    failing: int | None
    folded: frozenset[int]  # docstring lines, shown as one line


def shown_regions(
    issue: str,
    tree: dict[str, str],
    target: Target,
    size: int,
    failing: list[tuple[str, int]],
) -> list[Region]:
    """Each target location with the lines of its file shown numbered: at most `size` around
    the line where the reproduction fails (`failing`: traceback frames, innermost first) and
    the issue's words in code, and a few more around them."""
    shown = []
    for location in target.locations:
        text = tree[location.path]
        folded = docstring_lines(text) if location.path.endswith(".py") else frozenset()
        prose = folded | comment_lines(text)
        line = next(
            (
                number
                for path, number in failing
                if path == location.path and location.start <= number <= location.end
            ),
            None,
        )
        start, end = region(text, location.start, location.end, issue, size, prose, line)
        start, end = max(1, start - REGION_MARGIN), min(end + REGION_MARGIN, len(text.splitlines()))
        shown.append(Region(location, start, end, line, folded))
    return shown


def shown_spans(regions: list[Region]) -> dict[str, tuple[Span, ...]]:
    """The lines shown of each file, for matching the blocks of the reply."""
    spans: dict[str, tuple[Span, ...]] = {}
    for shown in regions:
        path = shown.location.path
        spans[path] = (*spans.get(path, ()), (shown.start, shown.end))
    return spans


def blocks_variables(issue: str, tree: dict[str, str], regions: list[Region]) -> dict[str, Any]:
    """Each target's file and its `regions` numbered as in the file."""
    shown = []
    for each in regions:
        path = each.location.path
        failing = (
            f"; the test of the issue fails at line {each.failing}"
            if each.failing is not None
            else ""
        )
        shown.append(
            f"{path} (lines {each.start}-{each.end}{failing}):\n```{structure.fence(path)}\n"
            f"{numbered(tree[path], each.start, each.end, each.folded)}\n```"
        )
    names = " and ".join(f"`{each.location.qualname}` in {each.location.path}" for each in regions)
    return {
        "problem_statement": issue,
        "names": names,
        "path": regions[0].location.path,
        "regions": "\n\n".join(shown),
    }
